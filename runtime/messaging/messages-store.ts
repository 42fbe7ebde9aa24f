// Postgres side of storing messages: every write of a send is one statement (the message, its number in its stream
// and the shares of the files it carries together), so a send costs one round trip once its thread is known, and a
// send never touches the thread row. Direct messages and group messages are stored in batches (runtime/messaging/hub.ts
// groups the sends that arrive together); a paid message alone, with its payment marked settled. All three insert
// their rows through insertMessages.
import type { Sql } from "../db/client.ts";
import type { StoredAttachment } from "./payload.ts";
import type { Quote } from "../../schema/messages.ts";
import { asError } from "../batcher.ts";
import { isFkViolation, isUniqueViolation, retryOnDeadlock } from "../db/errors.ts";
import { type Settlement, settledUpdate } from "../payments/payments-store.ts";
import type { KeyRow } from "../http/idempotency-store.ts";

/** A message to store: in a group (`threadId` is the group's), or, as a DirectMessage, to a principal. */
export interface NewMessage {
  id: bigint;
  threadId: bigint;
  sender: string;
  body: string;
  createdAt: Date;
  /** The sender's files it carries (checked by runtime/messaging/attachments.ts); shared with its recipients as it is stored. */
  attachments?: StoredAttachment[];
  /** The Idempotency-Key it was sent with (runtime/http/idempotency.ts), kept with it. */
  idempotencyKey?: string;
  /** A reply: the quote of the message it answers (runtime/messaging/replies-store.ts). */
  reply?: Quote;
  /**
   * Its Idempotency-Key claimed in the statement that stores it (runtime/http/idempotency.ts, KeyedRequest), with the
   * answer kept for it: the key's row commits with the message or not at all. A key already taken stores nothing
   * and answers a KeyTaken with what holds it.
   */
  folded?: FoldedSend;
}

/** A send's key as its statement claims it: what was asked (SHA-256), this node's token, and the 201's body. */
export interface FoldedSend {
  fingerprint: Buffer;
  owner: string;
  /** The smallest message id the key's window still holds: a message sent with the key before it is no retry's. */
  since: bigint;
  /** The JSON answered for it (called as the statement is built, so an id replaced after an IdClash is in it). */
  answer: () => string;
}

/** A group message not stored: these other members are paid agents, who are paid per message, and only directly. */
export class PaidMembers extends Error {
  constructor(readonly members: string[]) {
    super("paid members");
  }
}

/** A send's Idempotency-Key was taken already (a retry, or the same key twice at once): nothing was stored. */
export class KeyTaken extends Error {
  constructor(
    /** What holds the key, or null when its holder had not committed as the statement began (it is running). */
    readonly row: KeyRow | null,
  ) {
    super("Idempotency-Key taken");
  }
}

/** Of these message ids, the ones committed, with their numbers (a send whose commit's outcome was not heard). */
export async function committedSeqs(sql: Sql, ids: bigint[]): Promise<Map<string, number>> {
  const rows = await sql<
    { id: bigint; seq: string }[]
  >`select id, seq from messages where id = any(${ids.map(String)}::bigint[]) and seq is not null`;
  return new Map(rows.map((r) => [r.id.toString(), Number(r.seq)]));
}

/**
 * A message's id is already taken: two live nodes generated ids under one node id (only while a node id is being
 * taken over after a Redis loss, see runtime/node-lease.ts). The message was not stored: store it under a new id.
 */
export class IdClash extends Error {}

/** A direct message: stored in its recipient's inbox, in the pair's direct thread (`threadId`). */
export interface DirectMessage extends NewMessage {
  recipient: string;
}

/** A batch's attachments as two parallel columns: the message's id and the file's id (raw), one row per file. */
function attachmentPairs(items: NewMessage[]): { messages: string[]; files: string[] } {
  const messages: string[] = [];
  const files: string[] = [];
  for (const i of items) {
    for (const a of i.attachments ?? []) {
      messages.push(String(i.id));
      files.push(a.id.slice("file_".length));
    }
  }
  return { messages, files };
}

/** The attachments column of each item: JSON text, null when none. */
const attachmentsJson = (items: NewMessage[]) =>
  items.map((i) => (i.attachments?.length ? JSON.stringify(i.attachments) : null));

/** The reply column of each item: the quote as JSON text, null when not a reply. */
const replyJson = (items: NewMessage[]) => items.map((i) => (i.reply ? JSON.stringify(i.reply) : null));

/**
 * The CTEs (after `d`, each stored message's recipients: recipient and message_id) that record the files each stored
 * message carries (message_files: file, thread, message) and share them with its recipients in its thread
 * (file_shares: file, recipient, thread): only files the sender still owns. A recipient reads such a file while a
 * kept message of a thread it is still a member of carries it (runtime/files/records.ts visibleFile). Nothing when
 * the batch has none.
 */
function shareCte(sql: Sql, items: NewMessage[], stored = "ok") {
  const pairs = attachmentPairs(items);
  if (pairs.files.length === 0) return sql``;
  return sql`, carried as (
    select distinct f.id as file_id, ok.thread_id, ok.id as message_id
    from unnest(${pairs.messages}::bigint[], ${pairs.files}::bigint[]) as a(message_id, file_id)
      join ${sql(stored)} ok on ok.id = a.message_id
      join files f on f.id = a.file_id and f.owner = ok.sender
  ),
  mf as (
    insert into message_files (file_id, thread_id, message_id)
    select file_id, thread_id, message_id from carried
    on conflict do nothing
  ),
  s as (
    insert into file_shares (file_id, principal, thread_id)
    select distinct c.file_id, d.recipient, c.thread_id
    from carried c join d on d.message_id = c.message_id
    on conflict do nothing
  )`;
}

/**
 * The one insert of messages: the rows of the CTE `from`, which has the messages' columns (attachments and reply as
 * JSON text), returning each one's id and number.
 */
const insertMessages = (sql: Sql, from: string) => sql`
  insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, seq, idempotency_key, reply)
  select id, thread_id, sender, recipient, body, created_at, attachments::jsonb, seq, idempotency_key, reply::jsonb
  from ${sql(from)}
  returning id, seq`;

/** The oldest of the folded keys' windows (the same on one node). */
function keysSince(items: NewMessage[]): bigint {
  const since = items.flatMap((i) => (i.folded ? [i.folded.since] : []));
  return since.reduce((min, s) => (s < min ? s : min), since[0] ?? 0n);
}

/** The folded keys' columns of each item (fingerprint as hex, owner, kept answer): nulls for an item sent without one. */
function foldedColumns(items: NewMessage[]): {
  fingerprints: (string | null)[];
  owners: (string | null)[];
  answers: (string | null)[];
} {
  return {
    fingerprints: items.map((i) => i.folded?.fingerprint.toString("hex") ?? null),
    owners: items.map((i) => i.folded?.owner ?? null),
    answers: items.map((i) => i.folded?.answer() ?? null),
  };
}

/**
 * The CTEs, after `checked` (each message that passed its checks, with `n` its place in the batch), that claim the
 * folded keys with their answers, then `ok`: the messages to store, those sent without a folded key and those whose
 * key this statement claimed. A key already held leaves its message out (the final select's keyHolder says what
 * holds it); so do the same key twice in one batch, after its first (whose row the second finds on its retry), and
 * a key a stored message within the key's window carries already (its answer was not kept: its sender's retry finds
 * it, sentWithKey).
 */
const claimKeys = (sql: Sql, items: NewMessage[]) =>
  !items.some((i) => i.folded)
    ? sql`ok as (select * from checked)`
    : sql`
  fresh as (
    select * from (
      select c.*, row_number() over (partition by c.sender, c.idempotency_key order by c.n) as nth from checked c
    ) x where x.fingerprint is null or (x.nth = 1 and not exists (
      select 1 from messages s where s.sender = x.sender and s.idempotency_key = x.idempotency_key
        and s.id >= ${String(keysSince(items))}))
  ),
  claimed as (
    insert into idempotency_keys (principal, key, fingerprint, owner, status, body)
    select sender, idempotency_key, decode(fingerprint, 'hex'), key_owner, 201, answer from fresh where fingerprint is not null
    on conflict do nothing
    returning principal, key
  ),
  ok as (
    select f.* from fresh f where f.fingerprint is null
      or exists (select 1 from claimed c where c.principal = f.sender and c.key = f.idempotency_key)
  )`;

/**
 * The key row holding an item's folded key when this statement did not claim it (as the statement began: a holder
 * committing meanwhile is not seen, and the item's KeyTaken then has no row), its columns named as KeyRow's.
 */
const keyHolder = (sql: Sql, items: NewMessage[], v: string) =>
  !items.some((i) => i.folded)
    ? sql``
    : sql`
  left join lateral (
    select k.fingerprint as k_fingerprint, k.owner as k_owner, k.status as k_status, k.body as k_body,
      extract(epoch from now() - k.started_at)::float8 as k_running_s, extract(epoch from now() - k.created_at)::float8 as k_age_s
    from idempotency_keys k
    where ${sql(v)}.fingerprint is not null and k.principal = ${sql(v)}.sender and k.key = ${sql(v)}.idempotency_key
      and not exists (select 1 from ok where ok.id = ${sql(v)}.id)
  ) k on true`;

/** keyHolder's columns in a batch statement's final select, when the batch folds a key. */
const keyColumns = (sql: Sql, items: NewMessage[]) => (items.some((i) => i.folded) ? sql`, k.*` : sql``);

/** What a batch statement's final select answers per item it found (keyHolder's columns null unless its key was held). */
interface BatchRow {
  id: bigint;
  seq: string | bigint | null;
  taken: boolean;
  /** A group message's other members who are paid agents (it is not stored: group messages cannot be paid). */
  paid?: string[] | null;
  k_fingerprint?: Buffer | null;
  k_owner?: string | null;
  k_status?: number | null;
  k_body?: string | null;
  k_running_s?: number | null;
  k_age_s?: number | null;
}

/**
 * Whether each item's id is taken (`t.taken` not null), by one primary-key probe per item: as a plain `exists` in the
 * select list Postgres hashed the whole messages table instead (a sequential scan per batch, growing with the table).
 */
const taken = (sql: Sql) =>
  sql`left join lateral (select true as taken from messages x where x.id = v.id limit 1) t on true`;

/**
 * Each item's outcome from a batch statement's rows (one per item it found): its number, null when it has no row (its
 * recipient is gone, or its sender is not a member of the group), or an IdClash when its id was taken.
 */
function outcomes(items: NewMessage[], rows: BatchRow[]): (number | null | Error)[] {
  const byId = new Map(rows.map((r) => [r.id.toString(), r]));
  return items.map((i) => {
    const got = byId.get(i.id.toString());
    if (got === undefined) return null;
    if (got.taken) return new IdClash(`message id ${i.id} taken`);
    if (got.seq !== null) return Number(got.seq);
    if (got.paid) return new PaidMembers(got.paid);
    // found, not taken and not stored: only a folded key held elsewhere leaves a message out
    if (i.folded === undefined) return new Error(`message ${i.id} found but neither stored nor refused`);
    if (got.k_fingerprint == null) return new KeyTaken(null);
    return new KeyTaken({
      fingerprint: got.k_fingerprint,
      owner: got.k_owner ?? "",
      status: got.k_status ?? null,
      body: got.k_body ?? null,
      running_s: got.k_running_s ?? 0,
      age_s: got.k_age_s ?? 0,
    });
  });
}

/**
 * Store direct messages in one statement (one commit for the batch): each is numbered in its recipient's inbox
 * (the inbox row's `last_seq`, raised under its lock by one upsert for the batch, as flock_inbox_take of migration
 * 0011 does for one message, so the numbers committed have no gaps and follow the commit order; a new inbox gets its
 * cursor), and the files it carries are shared with the recipient. Per item: its number
 * in the inbox, null when the recipient's account is gone, or an IdClash (checked before numbering: no gap).
 */
export async function insertDirectBatch(sql: Sql, items: DirectMessage[]): Promise<(number | null | Error)[]> {
  const keys = foldedColumns(items);
  try {
    const rows = await retryOnDeadlock(
      () => sql<BatchRow[]>`
      with v as (
        select * from unnest(
          ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
          ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.recipient)}::text[],
          ${items.map((i) => i.body)}::text[], ${items.map((i) => i.createdAt.toISOString())}::timestamptz[],
          ${attachmentsJson(items)}::text[], ${items.map((i) => i.idempotencyKey ?? null)}::text[], ${replyJson(items)}::text[],
          ${keys.fingerprints}::text[], ${keys.owners}::text[], ${keys.answers}::text[]
        ) with ordinality as v(id, thread_id, sender, recipient, body, created_at, attachments, idempotency_key, reply, fingerprint, key_owner, answer, n)
      ),
      found as (
        select v.*, t.taken is not null as taken from v ${taken(sql)}
        where exists (select 1 from principals p where p.id = v.recipient)
      ),
      checked as (select * from found where not taken),
      ${claimKeys(sql, items)},
      raised as (
        insert into inboxes as i (principal, last_seq)
        select recipient, count(*) from ok group by recipient order by recipient
        on conflict (principal) do update set last_seq = i.last_seq + excluded.last_seq
        returning principal as recipient, last_seq, xmax = 0 as made
      ),
      cursors as (
        insert into stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
        select recipient, 0, 0, 0, 0 from raised where made
        on conflict do nothing
      ),
      numbered as (
        select ok.*, r.last_seq - count(*) over (partition by ok.recipient)
          + row_number() over (partition by ok.recipient order by ok.n) as seq
        from ok join raised r on r.recipient = ok.recipient
      ),
      m as (${insertMessages(sql, "numbered")}),
      d as (select recipient, id as message_id from numbered)${shareCte(sql, items, "numbered")}
      select found.id, numbered.seq, found.taken ${keyColumns(sql, items)} from found left join numbered on numbered.id = found.id
        ${keyHolder(sql, items, "found")}`,
    );
    return outcomes(items, rows);
  } catch (err) {
    if (isUniqueViolation(err) && items.length === 1) return [new IdClash(`message id ${items[0]!.id} taken`)];
    if (!(isFkViolation(err) || isUniqueViolation(err))) throw err;
    if (items.length === 1) return [null];
    // an account vanished during the statement: store each on its own (an error stays that item's: the Batcher
    // must not run the whole batch again once some of it is stored)
    return Promise.all(items.map((i) => insertDirectBatch(sql, [i]).then((r) => r[0]!, asError)));
  }
}

/**
 * Store group messages once each, in one statement: each message is numbered in its group's sequence (the group
 * row's `last_seq`, raised under its lock, so the numbers committed have no gaps and follow the commit order), no
 * delivery rows are written (a member's state is its cursor, stream_cursors), and the sender's cursor takes its own
 * message. The files a message carries are shared with every other member. Per item: its number in the group,
 * null when the sender is not a member of the group, a PaidMembers when another member is a paid agent (nothing
 * stored), or an IdClash (checked before numbering, so a clash leaves no gap).
 */
export async function insertGroupBatch(sql: Sql, items: NewMessage[]): Promise<(number | null | Error)[]> {
  try {
    return await insertGroups(sql, items);
  } catch (err) {
    // an id committed meanwhile by a node with the same node id (its check saw no row): that item is an IdClash; the
    // statement rolled back whole, so its numbers were taken back with it (no gap)
    if (isUniqueViolation(err) && items.length === 1) return [new IdClash(`message id ${items[0]!.id} taken`)];
    // ... or a member's account vanished during the statement (its file shares): store each on its own
    if (!(isFkViolation(err) || isUniqueViolation(err)) || items.length === 1) throw err;
    return Promise.all(items.map((i) => insertGroupBatch(sql, [i]).then((r) => r[0]!, asError)));
  }
}

async function insertGroups(sql: Sql, items: NewMessage[]): Promise<(number | null | Error)[]> {
  const keys = foldedColumns(items);
  const rows = await retryOnDeadlock(
    () => sql<(BatchRow & { done: boolean | null })[]>`
    with v as (
      select * from unnest(
        ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
        ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.body)}::text[],
        ${items.map((i) => i.createdAt.toISOString())}::timestamptz[], ${attachmentsJson(items)}::text[],
        ${items.map((i) => i.idempotencyKey ?? null)}::text[], ${replyJson(items)}::text[],
        ${keys.fingerprints}::text[], ${keys.owners}::text[], ${keys.answers}::text[]
      ) with ordinality as v(id, thread_id, sender, body, created_at, attachments, idempotency_key, reply, fingerprint, key_owner, answer, n)
    ),
    member as (
      select v.*, t.taken is not null as taken, p.paid from v ${taken(sql)}
        left join lateral (
          select array_agg(tm.principal order by tm.principal) as paid
          from thread_members tm join paid_agents pa on pa.principal = tm.principal
          where tm.thread_id = v.thread_id and tm.principal <> v.sender and pa.x402_enabled and pa.price_micros is not null
        ) p on true
      where exists (
        select 1 from thread_members tm join groups g on g.id = tm.thread_id
        where tm.thread_id = v.thread_id and tm.principal = v.sender)
    ),
    checked as (select * from member where not taken and paid is null),
    ${claimKeys(sql, items)},
    raised as (
      update groups g set last_seq = g.last_seq + c.k
      from (select thread_id, count(*) as k from ok group by thread_id) c
      where g.id = c.thread_id
      returning g.id, g.last_seq
    ),
    numbered as (
      select ok.*, null::text as recipient, r.last_seq - count(*) over (partition by ok.thread_id)
        + row_number() over (partition by ok.thread_id order by ok.n) as seq
      from ok join raised r on r.id = ok.thread_id
    ),
    m as (${insertMessages(sql, "numbered")}),
    own as (select numbered.id, flock_stream_ack(numbered.sender, numbered.thread_id, numbered.seq, false) as done from numbered),
    d as (
      select tm.principal as recipient, numbered.id as message_id from numbered
        join thread_members tm on tm.thread_id = numbered.thread_id and tm.principal <> numbered.sender
    )${shareCte(sql, items, "numbered")}
    select member.id, numbered.seq, member.taken, member.paid, own.done ${keyColumns(sql, items)}
    from member left join numbered on numbered.id = member.id left join own on own.id = member.id
      ${keyHolder(sql, items, "member")}`,
  );
  return outcomes(items, rows);
}

/**
 * A paid direct message, after its settlement (runtime/payments/paid-send.ts): stored, numbered in its recipient's
 * inbox (flock_inbox_take), the files it carries shared with the recipient, and its payment marked settled with it, in
 * one statement, so a message is never stored without its settled payment nor a payment marked settled without its
 * message. Its number in the inbox; null when the recipient's account is gone: the payment is still marked settled,
 * without a message.
 */
export async function insertPaidDirect(sql: Sql, m: DirectMessage, paid: Settlement): Promise<number | null> {
  try {
    const [row] = await sql<{ seq: string | null }[]>`
      with v as (
        select ${String(m.id)}::bigint as id, ${String(m.threadId)}::bigint as thread_id, ${m.sender}::text as sender,
          r.id as recipient, ${m.body}::text as body, ${m.createdAt.toISOString()}::timestamptz as created_at,
          ${attachmentsJson([m])[0] ?? null}::text as attachments, flock_inbox_take(r.id, 1) as seq,
          ${m.idempotencyKey ?? null}::text as idempotency_key, ${replyJson([m])[0] ?? null}::text as reply
        from principals r where r.id = ${m.recipient}
      ),
      m as (${insertMessages(sql, "v")}),
      d as (select recipient, id as message_id from v)${shareCte(sql, [m], "v")},
      u as (${settledUpdate(sql, paid, "m")})
      select (select seq from m) as seq`;
    return row?.seq == null ? null : Number(row.seq);
  } catch (err) {
    if (!isFkViolation(err)) throw err;
    await settledUpdate(sql, paid);
    return null;
  }
}
