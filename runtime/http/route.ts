// What a route is: method, path, auth requirement, input schemas, rate-limit policy and the handler.
import type { Readable } from "node:stream";
import type { StreamedBody } from "./send-stream.ts";
import type { z } from "zod";
import type { Logger } from "../log.ts";
import type { Principal } from "../auth.ts";
import type { Services } from "../services.ts";
import type { PolicyName } from "../limits/policies.ts";

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
export type AuthMode = "none" | "principal" | "agent" | "human";

export interface Reply {
  status: number;
  body?: unknown;
  /** A non-JSON body, sent as is with its content type. */
  raw?: { type: string; data: string | Buffer };
  /** A body streamed from a Readable with backpressure (file downloads); see send-stream.ts. */
  stream?: StreamedBody;
  headers?: Record<string, string>;
}

export interface Ctx<B = unknown, Q = unknown, P extends AuthMode = AuthMode> {
  method: Method;
  path: string;
  params: Record<string, string>;
  query: Q;
  body: B;
  headers: Record<string, string>;
  ip: string;
  reqId: string;
  log: Logger;
  principal: P extends "none" ? Principal | null : Principal;
  svc: Services;
  /** The raw request body, streamed with backpressure (routes declaring `stream: true` only). */
  stream?: Readable;
  /** Response headers added by the pipeline (rate-limit fields); handlers may add more. */
  replyHeaders: Record<string, string>;
  /** Run `cb` if the client goes away before the answer is written (at once if it already has). */
  onAborted?: (cb: () => void) => void;
}

export interface Route {
  method: Method;
  path: string;
  auth: AuthMode;
  body?: z.ZodType;
  query?: z.ZodType;
  /** Rate-limit policy applied before the handler runs (scope taken from the policy). */
  limit?: PolicyName;
  /** A GET with side effects: HEAD must not fall back to it. */
  noHead?: boolean;
  /** Hand the handler the raw body as `ctx.stream` (no JSON parsing, no Content-Type check, no size cap: the handler enforces its own). */
  stream?: boolean;
  /** Typed per route by defineRoute; the pipeline passes validated input. */
  handle(ctx: Ctx<unknown, unknown, AuthMode>): Promise<Reply> | Reply;
}

export function defineRoute<
  B extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  A extends AuthMode = AuthMode,
>(route: {
  method: Method;
  path: string;
  auth: A;
  body?: B;
  query?: Q;
  limit?: PolicyName;
  stream?: boolean;
  noHead?: boolean;
  handle(ctx: Ctx<z.infer<B>, z.infer<Q>, A>): Promise<Reply> | Reply;
}): Route {
  return route as unknown as Route;
}

export const noContent = (): Reply => ({ status: 204 });
export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
/** 200 with a body already serialized as JSON. */
export const okJson = (json: string): Reply => ({ status: 200, raw: { type: "application/json", data: json } });
