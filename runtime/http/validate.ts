// Turns zod failures into the one error shape: 400 invalid_request naming the field(s).
import type { z } from "zod";
import { ApiError } from "../errors.ts";

export function parseWith<T extends z.ZodType>(schema: T, input: unknown, where: "body" | "query"): z.infer<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({
    field: i.path.length > 0 ? i.path.join(".") : where,
    message: i.message,
  }));
  const first = issues[0]!;
  return fail(first.field, `${first.field}: ${first.message}`, issues);
}

function fail(field: string, message: string, issues: { field: string; message: string }[]): never {
  throw new ApiError("invalid_request", message, { field, issues });
}

export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError("invalid_request", "request body is required");
  try {
    return JSON.parse(buf.toString("utf8"));
  } catch {
    throw new ApiError("invalid_request", "request body is not valid JSON");
  }
}
