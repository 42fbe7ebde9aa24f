// What every tool is given: the client (its token may change: register), the paying client when the operator allows
// payments, the caps to show, the session's inbox and resource subscriptions; and `run`, which turns whatever a
// tool raises into a tool error (errors.ts) so nothing reaches the model as a protocol failure.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { newIdempotencyKey } from "../idempotency.ts";
import type { Flock } from "../index.ts";
import type { CapsView } from "./caps.ts";
import { creatingToolError, json, toolError } from "./errors.ts";
import type { Inbox } from "./inbox.ts";
import type { Subscriptions } from "./resources.ts";

export interface ToolContext {
  flock(): Flock;
  /** The client that pays within the operator's caps; undefined when paying is off. */
  paying(): Promise<Flock | undefined>;
  caps: CapsView;
  inbox: Inbox;
  subs: Subscriptions;
}

/**
 * The optional `idempotency_key` of a tool that creates something. Without it each call sends a fresh key (reused
 * across the SDK's own retries of that call); with it, calling again with the same key after an error whose outcome
 * was unknown answers what the first call did instead of creating the thing twice.
 */
/**
 * The longest id a tool takes (Flock's ids are a prefix and at most 19 digits), and the longest text: the node checks
 * both exactly, but a tool puts ids in the path of its request to the node, and a megabyte of path is never answered.
 */
export const ID_MAX = 64;
export const TEXT_MAX = 16_000;

export const idempotencyKeyArg = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "1 to 255 visible ASCII characters, no spaces")
  .optional()
  .describe(
    "optional: any unique string (1-255 visible ASCII characters) naming this one action. If the call fails with its outcome unknown (unavailable, no answer), call again with the same idempotency_key: it is then done at most once. Use a new key for a new action.",
  );

/** Run a tool's work: its answer as JSON text, any failure as a tool error. */
export async function run(ctx: ToolContext, work: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const out = await work();
    return json(out ?? { ok: true });
  } catch (err) {
    return toolError(err, ctx.caps);
  }
}

/**
 * Run the work of a tool that creates something, with one Idempotency-Key for the call (`given`, or a fresh one): a
 * failure whose outcome is unknown tells the model the key to call again with.
 */
export async function runCreating(
  ctx: ToolContext,
  given: string | undefined,
  work: (idempotencyKey: string) => Promise<unknown>,
): Promise<CallToolResult> {
  const key = given ?? newIdempotencyKey();
  try {
    const out = await work(key);
    return json(out ?? { ok: true });
  } catch (err) {
    return creatingToolError(err, ctx.caps, key);
  }
}
