// Every failure of a tool as a tool error the model can act on (`isError: true` with a sentence saying what to do),
// never a protocol error: a 429 says how long to wait, a 402 names the price, the asset, whom it goes to and the
// operator's caps. The SDK's transport has already retried per SPEC section 7 when one of these comes back.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { FlockError, FlockNetworkError, PaymentRequiredError } from "../errors.ts";
import { paymentRequiredOf } from "../payment-required.ts";
import type { PaymentRequired } from "../types.ts";
import { type CapsView, describeCaps } from "./caps.ts";

const UNITS_PER_DOLLAR = 1_000_000;

export const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
export const json = (data: unknown): CallToolResult => text(JSON.stringify(data, null, 2));
const fail = (t: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: t }] });

/**
 * Whether a failure leaves it unknown if the call's action was done: no answer, a 5xx, or (409 with Retry-After) an
 * earlier call with the same key still running.
 */
export function outcomeUnknown(err: unknown): boolean {
  if (err instanceof Error && err.name === "AbortError") return false;
  if (err instanceof FlockNetworkError) return err.retryable; // no answer (but a bad URL or host sent nothing)
  if (!(err instanceof FlockError)) return true;
  return err.status >= 500 || (err.status === 409 && err.code === "conflict" && err.retryAfter !== undefined);
}

/** A tool error for anything a creating tool's call raised: when its outcome is unknown, it names the key to call again with. */
export function creatingToolError(err: unknown, caps: CapsView, idempotencyKey: string): CallToolResult {
  const out = toolError(err, caps);
  if (!outcomeUnknown(err)) return out;
  const again = ` It may or may not have been done: call this tool again with the same arguments and idempotency_key "${idempotencyKey}" to finish it without doing it twice.`;
  return { ...out, content: out.content.map((c) => (c.type === "text" ? { ...c, text: c.text + again } : c)) };
}

/** A tool error for anything a tool call raised. */
export function toolError(err: unknown, caps: CapsView): CallToolResult {
  if (err instanceof FlockNetworkError)
    return fail(`${err.message}. The Flock server did not answer: tell the operator if this persists`);
  if (err instanceof FlockError && err.status === 402) return fail(paymentText(err, caps));
  if (err instanceof FlockError && err.status === 429) {
    const wait = err.retryAfter ?? 1;
    return fail(
      `rate limited: wait ${wait} seconds before calling this tool again (${err.message}). Do not retry sooner: repeated requests get the address banned.`,
    );
  }
  if (err instanceof FlockError) {
    const hint =
      CODE_HINTS[err.code] ??
      (err.status === 409 && err.retryAfter !== undefined ? STILL_RUNNING : undefined) ??
      HINTS[err.status] ??
      "";
    return fail(`${err.status} ${err.code}: ${err.message}${hint ? `. ${hint}` : ""}`);
  }
  if (err instanceof Error && err.name === "AbortError") return fail("cancelled");
  return fail(`error: ${err instanceof Error ? err.message : String(err)}`);
}

/** Hints by error code, before those by status. */
const CODE_HINTS: Record<string, string> = {
  idempotency_key_reused:
    "This idempotency_key was already used for a different action: use a new key for a new action (or leave it out)",
};
/** A 409 with Retry-After: the first call with this idempotency_key is still being handled. */
const STILL_RUNNING =
  "An earlier call with the same idempotency_key is still being handled: call again in a few seconds with the same idempotency_key to get its result (it is done only once)";

const HINTS: Record<number, string> = {
  400: "Fix the arguments and call again",
  401: "The Flock token is missing or invalid: the operator must set FLOCK_TOKEN (or call register when it is offered)",
  403: "This account may not do that",
  404: "No such thing, or not visible to you: check the id",
  409: "It conflicts with the current state (already done?)",
  503: "Flock is briefly unavailable: try again in a few seconds",
};

function paymentText(err: FlockError, caps: CapsView): string {
  const req =
    err instanceof PaymentRequiredError
      ? (err.requirements as PaymentRequired | null)
      : paymentRequiredOf(new Headers(), err.body);
  const options = (req?.accepts ?? []).map((a) => {
    const units = /^\d+$/.test(a.amount) ? Number(a.amount) : NaN;
    const usd = Number.isFinite(units)
      ? `$${(units / UNITS_PER_DOLLAR).toFixed(6).replace(/0+$/, "").replace(/\.$/, "")}`
      : a.amount;
    const name = typeof a.extra?.["name"] === "string" ? ` ${a.extra["name"]}` : "";
    return `pay ${usd} (${a.amount} atomic units of asset ${a.asset}${name}, network ${a.network}) to ${a.payTo}`;
  });
  const what = options.length > 0 ? options.join("; or ") : "no payment option was given";
  return `payment required: ${err.message}. This agent charges per message: ${what}. ${describeCaps(caps)}`;
}
