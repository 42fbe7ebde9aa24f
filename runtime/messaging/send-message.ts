// The send use case, for every send: a direct message (POST /v1/messages), a paid agent's message (the same route,
// through x402: runtime/payments/paid-send.ts) and a group message (POST /v1/groups/:id/messages). It checks in the
// order the contract answers (the files, a paid agent's 402, the reply's quote and the thread), so a refused send
// leaves nothing behind and is never charged, then stores and delivers the message (send.ts). A retry with an
// Idempotency-Key answers what its first request answered: found by the statement that would store it again, or,
// when a check refuses it, by keeping the refusal under the key. The handlers parse the request and call sendMessage.
import { grants, type Principal } from "../auth.ts";
import { ApiError, conflict, insufficientScope, invalid, notFound } from "../errors.ts";
import type { KeyedRequest } from "../http/idempotency.ts";
import { type Ctx, jsonText, type Reply, replayed } from "../http/route.ts";
import { parseId } from "../ids.ts";
import { demandPayment, paidSend } from "../payments/paid-send.ts";
import type { Services } from "../services.ts";
import { resolveAttachments } from "./attachments.ts";
import { pairKey } from "./direct-threads-store.ts";
import { insertPaidDirect, KeyTaken, PaidMembers } from "./messages-store.ts";
import { replyQuote } from "./replies.ts";
import { type Outgoing, sendDirect, sendGroup } from "./send.ts";
import { sentWithKey } from "./stream-store.ts";
import { isMember } from "./threads-store.ts";

/** What a send reads of its request: the services, the sender, the headers (a payment), the log and its key. */
export type SendCtx = Pick<
  Ctx<unknown, unknown, "principal">,
  "svc" | "principal" | "headers" | "log" | "idempotencyKey" | "keyed"
>;

/** A message as its sender gives it: the body, the ids of its own files it carries, and the message it answers. */
interface Composed {
  body: string;
  attachments?: string[];
  replyTo?: string;
}

/** A message to a principal: `to`, and the pair's direct thread when the sender names it (`thread_id`). */
export interface ToPrincipal extends Composed {
  to: string;
  threadId?: string;
}

/** A message to a group (its id, parsed). */
export interface ToGroup extends Composed {
  group: bigint;
}

/**
 * Sends a message: 201 with it (the JSON every recipient is delivered), or, when the sender already sent one with this
 * Idempotency-Key, 201 with that one, replayed (its first request committed but was never answered), nothing stored
 * or paid for again. Every refusal is an ApiError.
 *
 * A keyed send folds its key into the statement that stores the message (`ctx.keyed`): the key is claimed there with
 * the 201's body, so a keyed send costs what an unkeyed one does. A key found held answers what holds it (a replay,
 * a 422); a refusal before anything was stored is kept as the key's answer (or the key's first answer given
 * instead). What cannot fold runs the usual way, the key claimed first and the answer kept after: a paid agent's send
 * (claimed before its payment), and a key found running or expired.
 */
export async function sendMessage(ctx: SendCtx, m: ToPrincipal | ToGroup): Promise<Reply> {
  if ("to" in m && m.to === ctx.principal.id) {
    throw invalid("to: you cannot send a message to yourself", { field: "to" });
  }
  const keyed = ctx.keyed;
  if (keyed === undefined) return sendOnce(ctx, m);
  try {
    return await send(ctx, m, keyed);
  } catch (err) {
    if (err instanceof NotFolded) return keyed.once(() => sendOnce(ctx, m));
    if (err instanceof KeyTaken) return keyed.settled(err.row) ?? keyed.once(() => sendOnce(ctx, m));
    if (!(err instanceof ApiError)) throw err;
    const first = await keyed.refused(err);
    if (first === "stands") throw err;
    return first === "unsettled" ? keyed.once(() => sendOnce(ctx, m)) : first;
  }
}

/** A send that cannot fold its key (a paid agent's): it runs the usual way, its key claimed first. */
class NotFolded extends Error {}

/**
 * A send whose key, if it has one, is claimed already: the message already stored with it is answered again (its
 * first request committed, but its answer was not kept), else it is sent.
 */
async function sendOnce(ctx: SendCtx, m: ToPrincipal | ToGroup): Promise<Reply> {
  const before = await sentBefore(ctx.svc, ctx.principal, ctx.idempotencyKey, ctx.keyed?.since ?? 0n);
  if (before !== null) return replayed(jsonText(201, before));
  return send(ctx, m, undefined);
}

/** Checks and sends, the key folded into the statement when `folded` (a paid agent's send: claimed the usual way). */
function send(ctx: SendCtx, m: ToPrincipal | ToGroup, folded: KeyedRequest | undefined): Promise<Reply> {
  return "to" in m ? toPrincipal(ctx, m, folded) : toGroup(ctx, m, folded);
}

async function toPrincipal(ctx: SendCtx, m: ToPrincipal, folded: KeyedRequest | undefined): Promise<Reply> {
  const { svc, principal } = ctx;
  // checked before any payment: a send refused for its files is never charged (nor asked to pay)
  const attachments = await resolveAttachments(svc.sql, principal.id, m.attachments);
  // Blocks, before any payment (runtime/social/blocks.ts; cached): the blocked one's send answers as one to a recipient
  // who does not take the sender's messages (pairThread's 404), so they learn nothing; the blocker is told why.
  const rel = await svc.relations.of(principal.id);
  if (rel.blockedBy.has(m.to)) throw notFound("recipient");
  if (rel.blocking.has(m.to))
    throw conflict("you blocked this principal: unblock them (DELETE /v1/blocks/{id}) to write");
  // a paid agent's 402 comes before the pair's thread is made: an unpaid attempt leaves no empty conversation
  const terms = await svc.paidAgents.terms(m.to);
  // a paid send's key is claimed before its payment and its answer kept after it (x402 answers in several steps)
  // a paid send spends the sender's money: its token needs `payments` too (before it is asked to pay)
  if (terms && !grants(principal, "payments")) throw insufficientScope("payments");
  if (terms && folded) throw new NotFolded();
  if (terms) await demandPayment(ctx, terms, m.to);
  // the quote before the thread: a refused reply leaves no conversation behind
  const reply = await replyQuote(svc, { pair: pairKey(principal.id, m.to) }, m.replyTo, principal.id);
  const threadId = await pairThread(ctx, m);
  const msg: Outgoing = { threadId, body: m.body, attachments, idempotencyKey: ctx.idempotencyKey, reply, folded };
  if (!terms) return jsonText(201, await sendDirect(svc, principal, m.to, msg));
  return paidSend(ctx, terms, m.to, (paid, columns) =>
    sendDirect(svc, principal, m.to, msg, { store: (stored) => insertPaidDirect(svc.sql, stored, paid), columns }),
  );
}

/**
 * The direct thread of the sender and `to` (made on first contact), or 404 `recipient`. A `thread_id` the sender gives
 * must name it: another thread of the sender's is a 400, one that is not the sender's a 404, as for no thread.
 */
async function pairThread(ctx: SendCtx, m: ToPrincipal): Promise<bigint> {
  const { svc, principal } = ctx;
  const threadId = await svc.hub.directThread(principal.id, m.to);
  if (threadId === null) throw notFound("recipient");
  if (m.threadId === undefined) return threadId;
  const given = parseId("thread", m.threadId);
  if (given === threadId) return threadId;
  if (given === null || !(await isMember(svc.sql, given, principal.id))) throw notFound("thread");
  throw invalid("thread_id: not your direct thread with `to` (send to a group with POST /v1/groups/{id}/messages)", {
    field: "thread_id",
  });
}

async function toGroup(ctx: SendCtx, m: ToGroup, folded: KeyedRequest | undefined): Promise<Reply> {
  const { svc, principal } = ctx;
  const attachments = await resolveAttachments(svc.sql, principal.id, m.attachments);
  const reply = await replyQuote(svc, m.group, m.replyTo, principal.id);
  const msg: Outgoing = {
    threadId: m.group,
    body: m.body,
    attachments,
    idempotencyKey: ctx.idempotencyKey,
    reply,
    folded,
  };
  try {
    return jsonText(201, await sendGroup(svc, principal, msg));
  } catch (err) {
    // found by the statement that would have stored it
    if (!(err instanceof PaidMembers)) throw err;
    throw invalid(
      `group messages cannot be paid: ${err.members.join(", ")} charge per message; message them directly with POST /v1/messages`,
      { paid_members: err.members },
    );
  }
}

/**
 * The JSON of the message `from` already stored with this Idempotency-Key, or null: a retry whose first request
 * committed but was never answered (its node died, or the commit's outcome was unknown) gets the message it made,
 * and nothing is stored or paid for again (a message from before the key's window, `since`, is not its retry's).
 * Checked before anything else (a paid send's before its payment).
 */
async function sentBefore(
  svc: Services,
  from: Principal,
  key: string | undefined,
  since: bigint,
): Promise<string | null> {
  if (key === undefined) return null;
  return (await sentWithKey(svc.sql, from.id, key, since, svc.horizons.messages()))?.payload ?? null;
}
