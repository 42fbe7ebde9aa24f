// Postgres side of messaging: every write of a send is one statement (the message, its number in its stream and the
// shares of the files it carries together), so a send costs one round trip once its thread is known. A send never touches the thread row.
import type { Sql } from "../db/client.ts";
import type { MessageRow, StoredAttachment } from "./payload.ts";
import type { Quote } from "../../schema/messages.ts";
import { asError } from "../batcher.ts";
import { isFkViolation, isUniqueViolation, retryOnDeadlock } from "../db/errors.ts";

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
}

/** Of these message ids, the ones committed, with their numbers (a send whose commit's outcome was not heard). */
export async function committedSeqs(sql: Sql, ids: bigint[]): Promise<Map<string, number>> {
  const rows = await sql<
    { id: bigint; seq: string }[]
  >`select id, seq from messages where id = any(${ids.map(String)}::bigint[]) and seq is not null`;
  return new Map(rows.map((r) => [r.id.toString(), Number(r.seq)]));
}

/** The key of the one direct thread of a pair, whichever side starts it. */
export const pairKey = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/**
 * The direct thread of `me` and `to`, created on first use when `to` takes messages from `me`: an agent from anyone,
 * a person (human) from anyone or from friends only, as they chose (`accepts_messages_from`). A pair that already has
 * its thread may always write (the person wrote first, or they talked before). Null when `to` does not exist or does
 * not take messages from `me`: one statement answers both, doing the same work for both (the same probes, hit or
 * miss), so neither the answer nor its time tells a person who does not accept the message from no one.
 */
export async function directThread(sql: Sql, me: string, to: string, newId: bigint): Promise<bigint | null> {
  const pair = pairKey(me, to);
  const [row] = await sql<{ created: bigint | null; existing: bigint | null; found: boolean }[]>`
    with t as (select id from threads where pair_key = ${pair}),
    r as (
      select p.id from principals p
      where p.id = ${to}
        and (p.kind = 'agent' or p.accepts_messages_from = 'anyone' or exists (select 1 from t)
             or exists (select 1 from friendships f where f.principal = ${me} and f.friend = ${to}))
    ),
    ins as (
      insert into threads (id, kind, pair_key)
      select ${String(newId)}, 'direct', ${pair} from r
      on conflict (pair_key) do nothing
      returning id
    ),
    mem as (
      insert into thread_members (thread_id, principal)
      select ins.id, m.p from ins, (values (${me}::text), (${to}::text)) as m(p)
    )
    select (select id from ins) as created,
           (select id from t) as existing,
           exists (select 1 from r) as found`;
  if (!row?.found) return null;
  if (row.created !== null) return row.created;
  if (row.existing !== null) return row.existing;
  // created concurrently by a transaction our snapshot did not see
  const [again] = await sql<{ id: bigint }[]>`select id from threads where pair_key = ${pair}`;
  return again?.id ?? null;
}

/** Whether `principal` is a member of the thread. */
export async function isMember(sql: Sql, threadId: bigint, principal: string): Promise<boolean> {
  const rows =
    await sql`select 1 from thread_members where thread_id = ${String(threadId)} and principal = ${principal}`;
  return rows.length > 0;
}

/**
 * A message's id is already taken: two live nodes generated ids under one node id (only while a node id is being
 * taken over after a Redis loss, see runtime/node-lease.ts). The message was not stored: store it under a new id.
 */
export class IdClash extends Error {}

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
 * The CTEs (after `d`, the deliveries inserted, returning recipient and message_id) that record the files each stored
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
 * Whether each item's id is taken (`t.taken` not null), by one primary-key probe per item: as a plain `exists` in the
 * select list Postgres hashed the whole messages table instead (a sequential scan per batch, growing with the table).
 */
const taken = (sql: Sql) =>
  sql`left join lateral (select true as taken from messages x where x.id = v.id limit 1) t on true`;

/**
 * Store direct messages in one statement (one commit for the batch): each is numbered in its recipient's inbox
 * (the inbox row's `last_seq`, raised under its lock by one upsert for the batch, as flock_inbox_take of migration
 * 0011 does for one message, so the numbers committed have no gaps and follow the commit order; a new inbox gets its
 * cursor), and the files it carries are shared with the recipient. Per item: its number
 * in the inbox, null when the recipient's account is gone, or an IdClash (checked before numbering: no gap).
 */
export async function insertDirectBatch(sql: Sql, items: DirectMessage[]): Promise<(number | null | Error)[]> {
  try {
    const rows = await retryOnDeadlock(
      () => sql<{ id: bigint; seq: string | null; taken: boolean }[]>`
      with v as (
        select * from unnest(
          ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
          ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.recipient)}::text[],
          ${items.map((i) => i.body)}::text[], ${items.map((i) => i.createdAt.toISOString())}::timestamptz[],
          ${attachmentsJson(items)}::text[], ${items.map((i) => i.idempotencyKey ?? null)}::text[], ${replyJson(items)}::text[]
        ) with ordinality as v(id, thread_id, sender, recipient, body, created_at, attachments, idempotency_key, reply, n)
      ),
      found as (
        select v.*, t.taken is not null as taken from v ${taken(sql)}
        where exists (select 1 from principals p where p.id = v.recipient)
      ),
      ok as (select * from found where not taken),
      raised as (
        insert into inboxes as i (principal, last_seq)
        select recipient, count(*) from ok group by recipient order by recipient
        on conflict (principal) do update set last_seq = i.last_seq + excluded.last_seq
        returning principal as recipient, last_seq, xmax = 0 as made
      ),
      cursors as (
        insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
        select recipient, 0, 0, 0, 0 from raised where made
        on conflict do nothing
      ),
      numbered as (
        select ok.*, r.last_seq - count(*) over (partition by ok.recipient)
          + row_number() over (partition by ok.recipient order by ok.n) as seq
        from ok join raised r on r.recipient = ok.recipient
      ),
      m as (
        insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, seq, idempotency_key, reply)
        select id, thread_id, sender, recipient, body, created_at, attachments::jsonb, seq, idempotency_key, reply::jsonb from numbered
        returning id
      ),
      d as (select recipient, id as message_id from numbered)${shareCte(sql, items, "numbered")}
      select found.id, numbered.seq, found.taken from found left join numbered on numbered.id = found.id`,
    );
    const byId = new Map(rows.map((r) => [r.id.toString(), r]));
    return items.map((i) => {
      const got = byId.get(i.id.toString());
      if (got === undefined) return null;
      if (got.taken || got.seq === null) return new IdClash(`message id ${i.id} taken`);
      return Number(got.seq);
    });
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
 * delivery rows are written (a member's state is its cursor, group_cursors), and the sender's cursor takes its own
 * message. The files a message carries are shared with every other member. Per item: its number in the group,
 * null when the sender is not a member of the group, or an IdClash (checked before numbering, so a clash leaves no
 * gap).
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
  const rows = await retryOnDeadlock(
    () => sql<{ id: bigint; seq: bigint | null; taken: boolean; done: boolean | null }[]>`
    with v as (
      select * from unnest(
        ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
        ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.body)}::text[],
        ${items.map((i) => i.createdAt.toISOString())}::timestamptz[], ${attachmentsJson(items)}::text[],
        ${items.map((i) => i.idempotencyKey ?? null)}::text[], ${replyJson(items)}::text[]
      ) with ordinality as v(id, thread_id, sender, body, created_at, attachments, idempotency_key, reply, n)
    ),
    member as (
      select v.*, t.taken is not null as taken from v ${taken(sql)} where exists (
        select 1 from thread_members tm join groups g on g.id = tm.thread_id
        where tm.thread_id = v.thread_id and tm.principal = v.sender)
    ),
    ok as (select * from member where not taken),
    raised as (
      update groups g set last_seq = g.last_seq + c.k
      from (select thread_id, count(*) as k from ok group by thread_id) c
      where g.id = c.thread_id
      returning g.id, g.last_seq
    ),
    numbered as (
      select ok.*, r.last_seq - count(*) over (partition by ok.thread_id)
        + row_number() over (partition by ok.thread_id order by ok.n) as seq
      from ok join raised r on r.id = ok.thread_id
    ),
    m as (
      insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, seq, idempotency_key, reply)
      select id, thread_id, sender, null, body, created_at, attachments::jsonb, seq, idempotency_key, reply::jsonb from numbered
      returning id
    ),
    own as (select numbered.id, flock_group_ack(numbered.sender, numbered.thread_id, numbered.seq, false) as done from numbered),
    d as (
      select tm.principal as recipient, numbered.id as message_id from numbered
        join thread_members tm on tm.thread_id = numbered.thread_id and tm.principal <> numbered.sender
    )${shareCte(sql, items, "numbered")}
    select member.id, numbered.seq, member.taken, own.done
    from member left join numbered on numbered.id = member.id left join own on own.id = member.id`,
  );
  const byId = new Map(rows.map((r) => [r.id.toString(), r]));
  return items.map((i) => {
    const got = byId.get(i.id.toString());
    if (got === undefined) return null;
    if (got.taken || got.seq === null) return new IdClash(`message id ${i.id} taken`);
    return Number(got.seq);
  });
}

/** An ack: the recipient, the message, and whether it also acknowledges the group's earlier messages. */
export interface AckItem {
  recipient: string;
  id: bigint;
  through?: boolean;
}

/**
 * An ack's outcome: the member's cursor took the message (where the cursor is now, and the message's stream: 0 for
 * the member's inbox, else its group, and number), or false.
 */
export type AckOutcome = { thread: bigint; seq: number; acked: number } | false;

/**
 * Acknowledge, durably (an answered ack is final, through crashes: synchronous_commit stays on), by moving the member's
 * cursor in the message's stream (flock_group_ack, migration 0010): a direct message's is the recipient's inbox
 * (thread 0), a group message's its group. That message, or with `through` every message of the stream up to it: the
 * sender's own group messages are acknowledged as they are stored, so acking one, as a socket that received it from
 * its group's topic does, changes nothing, `through` or not (over HTTP a sender never receives its own, so a cumulative
 * ack of one could take messages it has not seen). Idempotent: acking again moves nothing and is still found. Per
 * item: its outcome, false when it was never the caller's to acknowledge (a direct message to someone else, one of
 * a group the caller is not in or joined after).
 */
export async function ackBatch(sql: Sql, items: AckItem[]): Promise<AckOutcome[]> {
  // The usual acks are one set-based UPDATE (`up`): an ack alone of its member and stream in the batch that moves the
  // cursor straight to its message (the next one, or a cumulative ack), where no ack above the cursor waits to be taken
  // in. Every other ack goes through flock_group_ack, one call each (`grp`, never on a cursor `up` moved: those are
  // alone of their member and stream).
  const rows = await retryOnDeadlock(
    () => sql<{ n: number; stream: bigint | null; seq: string | null; acked: string | null }[]>`
    with v as (
      select * from unnest(
        ${items.map((i) => i.recipient)}::text[], ${items.map((i) => String(i.id))}::bigint[],
        ${items.map((i) => (i.through === true ? 1 : 0))}::int[]
      ) with ordinality as v(recipient, message_id, through, n)
    ),
    mm as (
      select v.*, case when m.recipient is null then m.thread_id else 0 end as stream, m.seq, m.sender
      from v join messages m on m.id = v.message_id and m.seq is not null and (m.recipient is null or m.recipient = v.recipient)
    ),
    solo as (
      select * from mm where mm.sender <> mm.recipient and (recipient, stream) in (
        select recipient, stream from mm group by 1, 2 having count(*) = 1)
    ),
    up as (
      update group_cursors gc set acked_seq = solo.seq from solo
      where gc.member = solo.recipient and gc.thread_id = solo.stream and gc.joined_seq < solo.seq
        and gc.acked_seq < solo.seq and (solo.through = 1 or gc.acked_seq = solo.seq - 1)
        and not exists (select 1 from group_acks a where a.member = gc.member and a.thread_id = gc.thread_id)
      returning solo.n
    )
    select mm.n::int as n, mm.stream, mm.seq, case when mm.n in (select n from up) then mm.seq
      else flock_group_ack(mm.recipient, mm.stream, mm.seq, mm.through = 1 and mm.sender <> mm.recipient) end as acked
    from mm`,
  );
  const out: AckOutcome[] = items.map(() => false);
  for (const r of rows) {
    if (r.stream === null || r.seq === null || r.acked === null || Number(r.acked) < 0) continue;
    out[r.n - 1] = { thread: BigInt(r.stream), seq: Number(r.seq), acked: Number(r.acked) };
  }
  return out;
}

/**
 * A page of a thread's history, newest first; one row more than asked tells whether more exist. It ends at `horizon`
 * (past retention, nothing is kept).
 */
export function history(
  sql: Sql,
  threadId: bigint,
  before: bigint | null,
  limit: number,
  horizon: bigint,
): Promise<MessageRow[]> {
  return sql<MessageRow[]>`
    select m.id, m.thread_id, m.sender, p.display_name as sender_name, p.avatar_key as sender_avatar, m.recipient, m.body, m.created_at, m.attachments,
           m.edited_at, m.deleted_at, m.reactions, m.reply, pay.tx_hash as pay_tx, pay.network as pay_network, pay.payer as pay_payer, pay.amount::text as pay_amount,
           pay.explorer_url as pay_explorer
    from messages m left join principals p on p.id = m.sender left join payments pay on pay.message_id = m.id
    where m.thread_id = ${String(threadId)} and m.id >= ${String(horizon)} ${before !== null ? sql`and m.id < ${String(before)}` : sql``}
    order by m.id desc
    limit ${limit + 1}`;
}
