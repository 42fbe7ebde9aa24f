// The message as recipients see it, built from a row, serialized once, and delivered as JSON text.
// The per-delivery `delivery_count` is spliced into that text, so handing out a message never re-parses it.
import { avatarPath } from "../../schema/avatar-path.ts";
import { getAddress } from "../address.ts";
import { PREFIX, parseId } from "../ids.ts";
import { type Attachment, type Message, type Quote, REACTION_BY_SHOWN } from "../../schema/messages.ts";

/** Shown as the display name of an author whose account is gone. */
export const DELETED_NAME = "[deleted]";

/** An attachment as the message row keeps it (messages.attachments, jsonb): its `url` follows from its id. */
export type StoredAttachment = Omit<Attachment, "url">;

export interface MessageRow {
  id: bigint;
  thread_id: bigint;
  sender: string;
  sender_name: string | null;
  /** The key of the sender's picture (principals.avatar_key); absent or null when none. */
  sender_avatar?: string | null;
  recipient: string | null;
  body: string;
  created_at: Date;
  /** The files it carries; null or absent when none. */
  attachments?: StoredAttachment[] | null;
  /** A paid message's settled payment (payments joined on message_id); absent or null otherwise. */
  pay_tx?: string | null;
  pay_network?: string | null;
  pay_payer?: string | null;
  pay_amount?: string | null;
  pay_explorer?: string | null;
  /** When the sender last changed its body; absent or null if never. */
  edited_at?: Date | null;
  /** When the sender deleted it (a tombstone: no body, no files); absent or null if not. */
  deleted_at?: Date | null;
  /** A reply's quote of the message it answers (messages.reply, migration 0018); absent or null otherwise. */
  reply?: Quote | null;
  /** Who reacted with what (messages.reactions, migration 0017): emoji -> principal ids in the order they reacted. */
  reactions?: Record<string, string[]> | null;
}

/** A message's reactions as it shows them: the most used first (then by emoji), each with its first reactors. */
export function reactionsOf(stored: Record<string, string[]>): NonNullable<Message["reactions"]> {
  return Object.entries(stored)
    .filter(([, by]) => by.length > 0)
    .sort(([a, x], [b, y]) => y.length - x.length || (a < b ? -1 : a > b ? 1 : 0))
    .map(([emoji, by]) => ({ emoji, count: by.length, by: by.slice(0, REACTION_BY_SHOWN) }));
}

export function toMessage(r: MessageRow): Message {
  return {
    id: PREFIX.message + r.id.toString(),
    thread_id: PREFIX.thread + r.thread_id.toString(),
    from: { id: r.sender, display_name: r.sender_name ?? DELETED_NAME, avatar_url: avatarPath(r.sender_avatar) },
    to: r.recipient ?? PREFIX.group + r.thread_id.toString(),
    body: r.deleted_at ? "" : r.body,
    created_at: r.created_at.toISOString(),
    ...(r.edited_at ? { edited_at: r.edited_at.toISOString() } : {}),
    ...(r.deleted_at ? { deleted_at: r.deleted_at.toISOString() } : {}),
    ...(r.reply && !r.deleted_at ? { reply_to: r.reply } : {}),
    ...(r.reactions && !r.deleted_at && Object.keys(r.reactions).length ? { reactions: reactionsOf(r.reactions) } : {}),
    ...(r.attachments?.length && !r.deleted_at
      ? { attachments: r.attachments.map((a) => ({ ...a, url: `/v1/files/${a.id}` })) }
      : {}),
    ...(r.pay_tx
      ? {
          payment: {
            transaction: r.pay_tx,
            network: r.pay_network ?? "",
            payer: r.pay_payer ? getAddress(r.pay_payer) : "",
            amount: r.pay_amount ?? "",
            explorer_url: r.pay_explorer ?? null,
          },
        }
      : {}),
  };
}

/**
 * The row as it shows while messages below `horizon` are gone (past retention): a quote of such a message shows it
 * gone, as a deleted message's quote does (body empty, `deleted` true: the reply keeps who it answered, not what).
 * A row itself below the horizon (found by its Idempotency-Key) shows no body, files, quote or reactions.
 */
export function atHorizon(r: MessageRow, horizon: bigint): MessageRow {
  if (r.id < horizon) return { ...r, body: "", attachments: null, reply: null, reactions: null };
  const quoted = r.reply ? parseId("message", r.reply.id) : null;
  if (!r.reply || r.reply.deleted || quoted === null || quoted >= horizon) return r;
  return { ...r, reply: { ...r.reply, body: "", deleted: true } };
}

/** toMessage of the row as it shows at `horizon` (atHorizon). */
export const toMessageAt = (r: MessageRow, horizon: bigint): Message => toMessage(atHorizon(r, horizon));

/** The JSON text of a message just stored by `sender` (the one serialization every recipient shares). */
export function freshPayload(
  sender: { id: string; displayName: string; avatarKey: string | null },
  m: {
    id: bigint;
    threadId: bigint;
    recipient: string | null;
    body: string;
    createdAt: Date;
    attachments?: StoredAttachment[];
    reply?: Quote;
  },
  extra: Partial<MessageRow> = {},
): string {
  return JSON.stringify(
    toMessage({
      id: m.id,
      thread_id: m.threadId,
      sender: sender.id,
      sender_name: sender.displayName,
      sender_avatar: sender.avatarKey,
      recipient: m.recipient,
      body: m.body,
      created_at: m.createdAt,
      attachments: m.attachments ?? null,
      reply: m.reply ?? null,
      ...extra,
    }),
  );
}

/** A stored payload (a JSON object) with `delivery_count` added as its last field. */
export function withDeliveryCount(payload: string, count: number): string {
  return `${payload.slice(0, -1)},"delivery_count":${count}}`;
}

/** The body of GET /v1/messages/pending. */
export function pendingJson(entries: { payload: string; deliveryCount: number }[], expired = 0): string {
  let out = '{"messages":[';
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (i > 0) out += ",";
    out += withDeliveryCount(e.payload, e.deliveryCount);
  }
  // unacknowledged messages that went past retention (FLOCK_RETENTION_MESSAGES) since the last answer said so
  return expired > 0 ? `${out}],"expired":${expired}}` : `${out}]}`;
}
