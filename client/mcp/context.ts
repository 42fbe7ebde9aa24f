// What every tool is given: the client (its token may change: register), the paying client when the operator allows
// payments, the caps to show, the session's inbox and resource subscriptions; and `run`, which turns whatever a
// tool raises into a tool error (errors.ts) so nothing reaches the model as a protocol failure.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Flock } from "../index.ts";
import type { CapsView } from "./caps.ts";
import { json, toolError } from "./errors.ts";
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

/** Run a tool's work: its answer as JSON text, any failure as a tool error. */
export async function run(ctx: ToolContext, work: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    const out = await work();
    return json(out ?? { ok: true });
  } catch (err) {
    return toolError(err, ctx.caps);
  }
}
