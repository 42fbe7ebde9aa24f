// What a route is: its declaration (method, path, auth requirement, input schemas, rate-limit policy: the shape is
// schema/route.ts's, which the OpenAPI document reads too) and the handler.
import type { Readable } from "node:stream";
import type { KeyedRequest } from "./idempotency.ts";
import type { StreamedBody } from "./send-stream.ts";
import type { z } from "zod";
import type { AuthMode, Method, RouteDeclaration } from "../../schema/route.ts";
import type { Logger } from "../log.ts";
import type { Principal } from "../auth.ts";
import type { Services } from "../services.ts";
import type { PolicyName } from "../limits/policies.ts";

export type { AuthMode, Method } from "../../schema/route.ts";

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
  /** The request's Idempotency-Key, on an `idempotent` route that was sent one (a message sent with it carries it). */
  idempotencyKey?: string;
  /** On a `"folded"` idempotent route sent an Idempotency-Key: the key, to fold into the route's work (runtime/http/idempotency.ts). */
  keyed?: KeyedRequest;
  /** Run `cb` if the client goes away before the answer is written (at once if it already has). */
  onAborted?: (cb: () => void) => void;
  /**
   * How a streamed `idempotent` route (an upload) does its work under the request's Idempotency-Key, once it has read
   * the body, which is known only then: `what` tells what was sent (the SHA-256 of its bytes, taken as they streamed
   * in, and what else makes it this request), besides the method, path and query. Without a key it runs `make` as is.
   * A streamed idempotent route must do its work through it (runtime/http/idempotency.ts).
   */
  once(what: string[], make: () => Promise<Reply>): Promise<Reply>;
}

export interface Route extends RouteDeclaration<PolicyName> {
  /**
   * Who may use the route at all, checked right after authentication and before the body is read or validated: it
   * throws (the moderation routes answer 404 to anyone but a moderator, whatever the input).
   */
  admit?(principal: Principal, svc: Services): Promise<void>;
  /** Typed per route by defineRoute; the pipeline passes validated input. */
  handle(ctx: Ctx<unknown, unknown, AuthMode>): Promise<Reply> | Reply;
}

export function defineRoute<
  B extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  A extends AuthMode = AuthMode,
>(
  route: Omit<RouteDeclaration<PolicyName>, "auth" | "body" | "query"> & {
    auth: A;
    body?: B;
    query?: Q;
    admit?(principal: Principal, svc: Services): Promise<void>;
    handle(ctx: Ctx<z.infer<B>, z.infer<Q>, A>): Promise<Reply> | Reply;
  },
): Route {
  return route as unknown as Route;
}

export const noContent = (): Reply => ({ status: 204 });
export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
/** A JSON text answered as is, with its status (it was serialized once already, e.g. for a message's delivery). */
export const jsonText = (status: number, data: string): Reply => ({ status, raw: { type: "application/json", data } });
/** An answer given again for a request's Idempotency-Key (runtime/http/idempotency.ts). */
export const replayed = (reply: Reply): Reply => ({
  ...reply,
  headers: { ...reply.headers, "Idempotency-Replayed": "true" },
});
/** 200 with a body already serialized as JSON. */
export const okJson = (json: string): Reply => jsonText(200, json);
