// Every failure of a tool as a tool error the model can act on (`isError: true` with a sentence saying what to do),
// never a protocol error: a 429 says how long to wait, a 402 names the price, the asset, whom it goes to and the
// operator's caps. The SDK's transport has already retried per SPEC section 7 when one of these comes back.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { FlockError, FlockNetworkError, PaymentRequiredError } from "../errors.ts";
import { paymentRequiredOf } from "../payment-required.ts";
import type { PaymentRequired } from "../types.ts";
import type { Flock } from "../index.ts";
import { MissingPaymentPackagesError } from "../payment-packages.ts";
import { type CapsView, canPay } from "./caps.ts";

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
  if (err instanceof MissingPaymentPackagesError) return false; // failed before anything was sent
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
  if (err instanceof MissingPaymentPackagesError)
    return fail(`${err.message}. Tell the operator: calling again before they are installed fails the same way`);
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

/** The paid agents that 402s were answered for (namePayee), by error: their names, for paymentText. */
const payees = new WeakMap<object, { id: string; name: string | undefined }>();

/**
 * Rethrow helper for a send to `to`: a 402 gets the paid agent's display name (its profile, read once) so the tool
 * error can name it; any other error is returned as it is.
 */
export async function namePayee(err: unknown, flock: Flock, to: string): Promise<unknown> {
  if (err instanceof FlockError && err.status === 402 && !payees.has(err)) {
    const agent = await flock.agent(to).catch(() => undefined);
    payees.set(err, { id: to, name: agent?.display_name });
  }
  return err;
}

const usd = (units: number) => `$${(units / UNITS_PER_DOLLAR).toFixed(6).replace(/0+$/, "").replace(/\.$/, "")}`;

/**
 * A 402 as one paragraph: who charges what (the price once, in US dollars, with the asset, network and payee), why
 * nothing was paid when a payment was refused, and the one way on: pay_and_send within the operator's caps, or what
 * the operator must configure first. Never the x402 headers: a model cannot set them.
 */
function paymentText(err: FlockError, caps: CapsView): string {
  const req =
    err instanceof PaymentRequiredError
      ? (err.requirements as PaymentRequired | null)
      : paymentRequiredOf(new Headers(), err.body);
  const prices = (req?.accepts ?? []).map((a) => {
    const price = /^\d+$/.test(a.amount) ? usd(Number(a.amount)) : a.amount;
    const name = typeof a.extra?.["name"] === "string" ? ` ${a.extra["name"]}` : "";
    return `${price} per message (US dollars: ${a.amount} atomic units of${name} asset ${a.asset}, network ${a.network}, paid to ${a.payTo})`;
  });
  const payee = payees.get(err);
  const who = payee ? `${payee.name ?? "This agent"} (agent ${payee.id})` : "This agent";
  const price = prices.length > 0 ? `${who} charges ${prices.join("; or ")}.` : `${who} charges per message.`;
  // the server's own demand restates the price and names HTTP headers: left out; a refusal (the server's, with a
  // reason, or this client's caps) is the reason nothing was paid, and is kept
  const body = err.body as { message?: unknown; reason?: unknown } | undefined;
  const demand = body?.reason === undefined && body?.message === err.message;
  const why = demand ? "" : ` Not paid: ${err.message}.`;
  return `payment required: ${price}${why} ${nextStep(caps, demand)}`;
}

function nextStep(view: CapsView, demand: boolean): string {
  const c = view.caps;
  if (!c?.privateKey)
    return "This MCP server has no paying wallet, so nothing was signed: to pay, the operator starts it with FLOCK_MCP_PRIVATE_KEY (the wallet's key) and caps in US dollars above 0 (FLOCK_MCP_MAX_PER_MESSAGE and FLOCK_MCP_MAX_TOTAL); then the tool pay_and_send pays and sends.";
  if (!canPay(c))
    return "The operator's caps allow no payment, so nothing was signed: FLOCK_MCP_MAX_PER_MESSAGE and FLOCK_MCP_MAX_TOTAL (US dollars) must be above 0 for the tool pay_and_send to pay.";
  const left = Math.max(0, c.maxTotal - Number(view.spent()) / UNITS_PER_DOLLAR);
  const capsText = `the operator's caps: at most $${c.maxPerMessage} per message and $${c.maxTotal} in total (${usd(Math.round(left * UNITS_PER_DOLLAR))} left)`;
  return demand
    ? `To send it paying, call the tool pay_and_send with the same to and body: it pays within ${capsText}.`
    : `Nothing was signed, within ${capsText}.`;
}
