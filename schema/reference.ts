// The published contract documents themselves (GET /v1/openapi.json, GET /v1/asyncapi.json), as far as a client
// relies on their shape.
import { z } from "zod";

export const OpenApiDocument = z
  .object({
    openapi: z.string().startsWith("3.1"),
    info: z.object({ title: z.string(), version: z.string() }).catchall(z.unknown()),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    components: z.record(z.string(), z.unknown()),
  })
  .catchall(z.unknown());

export const AsyncApiDocument = z
  .object({
    asyncapi: z.string().startsWith("3."),
    info: z.object({ title: z.string(), version: z.string() }).catchall(z.unknown()),
    channels: z.record(z.string(), z.unknown()),
    operations: z.record(z.string(), z.unknown()),
    components: z.record(z.string(), z.unknown()),
  })
  .catchall(z.unknown());
