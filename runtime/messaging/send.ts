// Storing and delivering a message its send checked (runtime/messaging/send-message.ts, the send use case): store it,
// forget a direct thread whose recipient the store found gone, build the message's JSON once and deliver it to its
// stream. A paid message is stored by the statement that also marks its payment settled (the `store` given). A keyed
// send's key is claimed, with the message's JSON as its answer, by the statement that stores it (`folded`).
import type { Principal } from "../auth.ts";
import { notFound } from "../errors.ts";
import type { Services } from "../services.ts";
import { freshPayload, type MessageRow, type StoredAttachment } from "./payload.ts";
import type { Quote } from "../../schema/messages.ts";
import type { DirectMessage, NewMessage } from "./messages-store.ts";
import { groupStream, inboxStream } from "./stream-id.ts";
import type { KeyedRequest } from "../http/idempotency.ts";
import type { Arrived } from "../push/notifier.ts";

export interface Outgoing {
  threadId: bigint;
  body: string;
  /** The sender's files, checked by resolveAttachments before anything is stored or charged. */
  attachments: StoredAttachment[];
  /** The request's Idempotency-Key, kept with the message (a replay of the send finds it by that). */
  idempotencyKey?: string;
  /** A reply: the quote of the message it answers, read by quoteOf (runtime/messaging/replies-store.ts). */
  reply?: Quote;
  /** The Idempotency-Key to claim in the statement that stores it, with its answer (a send's KeyTaken otherwise). */
  folded?: Pick<KeyedRequest, "fingerprint" | "owner" | "since">;
}

interface DirectSend {
  /** Stores the message; its number in the recipient's inbox, null when the recipient no longer exists. It may replace the id (an IdClash). */
  store?: (m: DirectMessage) => Promise<number | null>;
  /** Extra columns of the answer (a paid message's payment). */
  columns?: Partial<MessageRow>;
}

/**
 * The message's JSON, built once for its id: by the statement that claims its folded key (its kept answer), else
 * after it is stored; built again only when the store replaced the id (an IdClash). A folded key is set on `m` here.
 */
function builtOnce(m: NewMessage, folded: Outgoing["folded"], build: () => string): () => string {
  let built: { id: bigint; json: string } | undefined;
  const json = () => {
    if (built?.id !== m.id) built = { id: m.id, json: build() };
    return built.json;
  };
  if (folded) m.folded = { fingerprint: folded.fingerprint, owner: folded.owner, since: folded.since, answer: json };
  return json;
}

/** A direct message to `to`, stored in its inbox and delivered; answers its JSON (what the send answers, and what is delivered). */
export async function sendDirect(
  svc: Services,
  from: Principal,
  to: string,
  msg: Outgoing,
  opts: DirectSend = {},
): Promise<string> {
  const hub = svc.hub;
  const m: DirectMessage = {
    id: svc.ids.nextRaw(),
    threadId: msg.threadId,
    sender: from.id,
    recipient: to,
    body: msg.body,
    createdAt: new Date(svc.now()),
    attachments: msg.attachments,
    idempotencyKey: msg.idempotencyKey,
    reply: msg.reply,
  };
  const json = builtOnce(m, msg.folded, () => freshPayload(from, m, opts.columns));
  const seq = await (opts.store ?? ((x) => hub.storeDirect(x)))(m);
  if (seq === null) {
    hub.forgetDirectThread(from.id, to);
    throw notFound("recipient");
  }
  svc.metrics.sent.direct.inc();
  const payload = json();
  await hub.deliver({ key: inboxStream(to), seq, id: m.id.toString(), payload });
  // a push to a recipient whose pages are closed, behind the answer (in memory for one with no subscription)
  svc.push.notifier.direct(to, arrived(from, m));
  return payload;
}

/** A message to a group the sender belongs to, stored once and published to its members; answers its JSON. */
export async function sendGroup(svc: Services, from: Principal, msg: Outgoing): Promise<string> {
  const hub = svc.hub;
  const m: NewMessage = {
    id: svc.ids.nextRaw(),
    threadId: msg.threadId,
    sender: from.id,
    body: msg.body,
    createdAt: new Date(svc.now()),
    attachments: msg.attachments,
    idempotencyKey: msg.idempotencyKey,
    reply: msg.reply,
  };
  const json = builtOnce(m, msg.folded, () => freshPayload(from, { ...m, recipient: null }));
  const seq = await hub.storeGroup(m);
  if (seq === null) throw notFound("group");
  svc.metrics.sent.group.inc();
  const payload = json(); // the id may have been replaced (see storeGroup): built again then
  await hub.deliver({ key: groupStream(msg.threadId), seq, id: m.id.toString(), payload });
  svc.push.notifier.group(arrived(from, m));
  return payload;
}

/** What a push tells of a message. */
function arrived(from: Principal, m: NewMessage): Arrived {
  return { from, threadId: m.threadId, body: m.body, attachments: m.attachments?.length ?? 0 };
}
