// What a route declares, as data: method, path, who may call it, the schemas of its body and query, its rate-limit
// policy. One definition serves both sides: the runtime's Route (runtime/http/route.ts) is this plus its handler,
// and the OpenAPI document (openapi/document.ts) is built from it. The policy's name is a type parameter, since the
// policy table is the runtime's (runtime/limits/policies.ts); the document only asks whether a route is limited.
import type { z } from "zod";
import type { RouteScope } from "./tokens.ts";

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
export type AuthMode = "none" | "principal" | "agent" | "human";

export interface RouteDeclaration<Policy extends string = string> {
  method: Method;
  path: string;
  auth: AuthMode;
  /**
   * The token scope it needs (schema/tokens.ts), on every route with auth: a token without it answers 403
   * `insufficient_scope` naming it, before the body is read. Absent on an authenticated route: `full` (fail closed).
   */
  scope?: RouteScope;
  body?: z.ZodType;
  query?: z.ZodType;
  /** Rate-limit policy applied before the handler runs (scope taken from the policy). */
  limit?: Policy;
  /** A GET with side effects: HEAD must not fall back to it. */
  noHead?: boolean;
  /**
   * It creates something: it takes an `Idempotency-Key` header (runtime/http/idempotency.ts), and a retry with the
   * same key answers what the first request answered. `"folded"`: the handler folds the key into the statement that
   * does its work (a send: runtime/messaging/send-message.ts), through `ctx.keyed`, instead of a claim before it and
   * its answer kept after it.
   */
  idempotent?: boolean | "folded";
  /** Hand the handler the raw body as `ctx.stream` (no JSON parsing, no Content-Type check, no size cap: the handler enforces its own). */
  stream?: boolean;
  /** A send: when tracing is on (runtime/tracing.ts), the request is a span, the root of the send's trace. */
  traced?: boolean;
}
