// Postgres side of messaging: every write of a send is one statement (the message, its deliveries and the shares
// of the files it carries together), so a send costs one round trip once its thread is known. A send never touches the thread row.
import type { Sql } from "../db/client.ts";
import type { MessageRow, StoredAttachment } from "./payload.ts";
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
}

/** The key of the one direct thread of a pair, whichever side starts it. */
export const pairKey = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** The direct thread of `me` and `to`, created on first use; null when `to` does not exist. */
export async function directThread(sql: Sql, me: string, to: string, newId: bigint): Promise<bigint | null> {
  const pair = pairKey(me, to);
  const [row] = await sql<{ created: bigint | null; existing: bigint | null; found: boolean }[]>`
    with r as (select id from principals where id = ${to}),
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
           (select id from threads where pair_key = ${pair}) as existing,
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
  const rows = await sql`select 1 from thread_members where thread_id = ${String(threadId)} and principal = ${principal}`;
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
const attachmentsJson = (items: NewMessage[]) => items.map((i) => (i.attachments?.length ? JSON.stringify(i.attachments) : null));

/**
 * The CTE (after `d`, the deliveries inserted, returning recipient and message_id) that lets each recipient of a
 * stored message download the files it carries: only files the sender still owns. Nothing when the batch has none.
 */
function shareCte(sql: Sql, items: NewMessage[], stored = "ok") {
  const pairs = attachmentPairs(items);
  if (pairs.files.length === 0) return sql``;
  return sql`, s as (
    insert into file_shares (file_id, principal)
    select distinct f.id, d.recipient
    from unnest(${pairs.messages}::bigint[], ${pairs.files}::bigint[]) as a(message_id, file_id)
      join d on d.message_id = a.message_id
      join ${sql(stored)} ok on ok.id = a.message_id
      join files f on f.id = a.file_id and f.owner = ok.sender
    on conflict do nothing
  )`;
}

/**
 * Store direct messages, each with its one delivery, in one statement (one commit for the batch).
 * Per item: true, false when the recipient's account is gone, or an IdClash.
 */
export async function insertDirectBatch(sql: Sql, items: DirectMessage[]): Promise<(boolean | Error)[]> {
  try {
    const rows = await retryOnDeadlock(() => sql<{ id: bigint; stored: boolean }[]>`
      with v as (
        select * from unnest(
          ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
          ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.recipient)}::text[],
          ${items.map((i) => i.body)}::text[], ${items.map((i) => i.createdAt.toISOString())}::timestamptz[],
          ${attachmentsJson(items)}::text[]
        ) as v(id, thread_id, sender, recipient, body, created_at, attachments)
      ),
      ok as (select v.* from v where exists (select 1 from principals p where p.id = v.recipient)),
      m as (
        insert into messages (id, thread_id, sender, recipient, body, created_at, attachments)
        select id, thread_id, sender, recipient, body, created_at, attachments::jsonb from ok
        on conflict (id) do nothing
        returning id
      ),
      d as (
        insert into deliveries (recipient, message_id) select ok.recipient, ok.id from ok join m on m.id = ok.id
        returning recipient, message_id
      )${shareCte(sql, items)}
      select ok.id, m.id is not null as stored from ok left join m on m.id = ok.id`);
    const found = new Map(rows.map((r) => [r.id.toString(), r.stored]));
    return items.map((i) => {
      const stored = found.get(i.id.toString());
      return stored === false ? new IdClash(`message id ${i.id} taken`) : stored === true;
    });
  } catch (err) {
    if (!isFkViolation(err)) throw err;
    if (items.length === 1) return [false];
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
  const rows = await retryOnDeadlock(() => sql<{ id: bigint; seq: bigint | null; taken: boolean; done: boolean | null }[]>`
    with v as (
      select * from unnest(
        ${items.map((i) => String(i.id))}::bigint[], ${items.map((i) => String(i.threadId))}::bigint[],
        ${items.map((i) => i.sender)}::text[], ${items.map((i) => i.body)}::text[],
        ${items.map((i) => i.createdAt.toISOString())}::timestamptz[], ${attachmentsJson(items)}::text[]
      ) with ordinality as v(id, thread_id, sender, body, created_at, attachments, n)
    ),
    member as (
      select v.*, exists (select 1 from messages x where x.id = v.id) as taken from v where exists (
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
      insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, seq)
      select id, thread_id, sender, null, body, created_at, attachments::jsonb, seq from numbered
      returning id
    ),
    own as (select numbered.id, flock_group_ack(numbered.sender, numbered.thread_id, numbered.seq, false) as done from numbered),
    d as (
      select tm.principal as recipient, numbered.id as message_id from numbered
        join thread_members tm on tm.thread_id = numbered.thread_id and tm.principal <> numbered.sender
    )${shareCte(sql, items, "numbered")}
    select member.id, numbered.seq, member.taken, own.done
    from member left join numbered on numbered.id = member.id left join own on own.id = member.id`);
  const byId = new Map(rows.map((r) => [r.id.toString(), r]));
  return items.map((i) => {
    const got = byId.get(i.id.toString());
    if (got === undefined) return null;
    if (got.taken || got.seq === null) return new IdClash(`message id ${i.id} taken`);
    return Number(got.seq);
  });
}

// Writes whose loss on a Postgres crash costs only a redelivery (delivery counts) commit without waiting for
// the WAL flush. The statement turns `synchronous_commit` off for its own implicit transaction (`set_config(..., true)`
// lasts until that transaction ends, after its commit record), so it is one round trip and one socket write, where
// BEGIN / SET LOCAL / statement / COMMIT took four: a group bench spent a tenth of the server's time writing those.
// Each such statement opens with the CTE `relaxed` (that set_config) and references it, so it is evaluated.

/** An ack: the recipient, the message, and whether it also acknowledges the group's earlier messages. */
export interface AckItem {
  recipient: string;
  id: bigint;
  through?: boolean;
}

/**
 * An ack's outcome: a group message stored once (the member's cursor took it: where the cursor is now, and the
 * message's group and number), "delivery", or false.
 */
export type AckOutcome = { thread: bigint; seq: number; acked: number } | "delivery" | false;

/**
 * Acknowledge, durably (an answered ack is final, through crashes: synchronous_commit stays on). A group message
 * stored once (it has a `seq`) moves the member's cursor (flock_group_ack, migration 0010): that message, or with
 * `through` every message of the group up to it (the sender's own are acknowledged as they are stored, so acking one,
 * as a socket that received it from its group's topic does, changes nothing, `through` or not: over HTTP a sender
 * never receives its own, so a cumulative ack of one could take messages it has not seen). Any other message's delivery row is deleted (a row is an
 * unacknowledged delivery). Idempotent: acking again finds no row, and the message then counts as found when it was
 * addressed to the caller (direct), or sent to a group the caller belongs to by someone else, after the caller
 * joined. Per item: its outcome, false when it was never the caller's to acknowledge.
 */
export async function ackBatch(sql: Sql, items: AckItem[]): Promise<AckOutcome[]> {
  // Two statements, the second only when needed. The first deletes the direct messages' delivery rows, and is all a
  // batch of direct acks costs: one statement holding the group part as well took Postgres twice as long to plan as
  // to run, and ack time is on a long-polling receiver's path (it acks, then polls again).
  const deleted = await retryOnDeadlock(() => sql<{ n: number }[]>`
    with v as (
      select * from unnest(${items.map((i) => i.recipient)}::text[], ${items.map((i) => String(i.id))}::bigint[])
        with ordinality as v(recipient, message_id, n)
    )
    delete from deliveries d using v
    where d.recipient = v.recipient and d.message_id = v.message_id
    returning v.n::int as n`);
  const out: AckOutcome[] = items.map(() => false);
  for (const r of deleted) out[r.n - 1] = "delivery";
  const rest = items.flatMap((item, i) => (out[i] === false ? [{ item, n: i + 1 }] : []));
  if (rest.length > 0) for (const [n, o] of await groupAckBatch(sql, rest)) out[n - 1] = o;
  return out;
}

/**
 * The acks that deleted no delivery row: a group message stored once, or a message acknowledged before (found when it
 * was the caller's), or one never the caller's. `n`: the item's place in its batch, the key of the answer.
 */
async function groupAckBatch(sql: Sql, rest: { item: AckItem; n: number }[]): Promise<Map<number, AckOutcome>> {
  // The usual group acks are one set-based UPDATE (`up`): an ack alone of its member and group in the batch that
  // moves the cursor straight to its message (the next one, or a cumulative ack), where no ack above the cursor waits
  // to be taken in. Every other group ack goes through flock_group_ack, one call each (`grp`, never on a cursor `up`
  // moved: those are alone of their member and group).
  const rows = await retryOnDeadlock(() => sql<{ n: number; thread_id: bigint | null; seq: string | null; acked: string | null; found: boolean }[]>`
    with v as (
      select * from unnest(
        ${rest.map((r) => r.item.recipient)}::text[], ${rest.map((r) => String(r.item.id))}::bigint[],
        ${rest.map((r) => (r.item.through === true ? 1 : 0))}::int[], ${rest.map((r) => r.n)}::int[]
      ) as v(recipient, message_id, through, n)
    ),
    mm as (select v.*, m.thread_id, m.seq, m.sender from v left join messages m on m.id = v.message_id),
    solo as (
      select * from mm where mm.seq is not null and mm.sender <> mm.recipient and (recipient, thread_id) in (
        select recipient, thread_id from mm where seq is not null group by 1, 2 having count(*) = 1)
    ),
    up as (
      update group_cursors gc set acked_seq = solo.seq from solo
      where gc.member = solo.recipient and gc.thread_id = solo.thread_id and gc.joined_seq < solo.seq
        and gc.acked_seq < solo.seq and (solo.through = 1 or gc.acked_seq = solo.seq - 1)
        and not exists (select 1 from group_acks a where a.member = gc.member and a.thread_id = gc.thread_id)
      returning solo.n
    ),
    grp as (
      select mm.n, mm.thread_id, mm.seq, case when mm.n in (select n from up) then mm.seq
        else flock_group_ack(mm.recipient, mm.thread_id, mm.seq, mm.through = 1 and mm.sender <> mm.recipient) end as acked
      from mm where mm.seq is not null
    )
    select v.n, grp.thread_id, grp.seq, grp.acked,
      case when grp.n is not null then grp.acked >= 0 else exists (
        select 1 from messages m
        where m.id = v.message_id and (m.recipient = v.recipient or (m.recipient is null and m.sender <> v.recipient and exists (
          select 1 from thread_members tm
          where tm.thread_id = m.thread_id and tm.principal = v.recipient and tm.joined_at <= m.created_at)))
      ) end as found
    from v left join grp on grp.n = v.n`);
  const out = new Map<number, AckOutcome>();
  for (const r of rows) {
    if (!r.found) out.set(r.n, false);
    else if (r.thread_id === null || r.seq === null || r.acked === null) out.set(r.n, "delivery");
    else out.set(r.n, { thread: r.thread_id, seq: Number(r.seq), acked: Number(r.acked) });
  }
  return out;
}

export type UnackedRow = MessageRow & { delivery_count: number };

/** The unacknowledged deliveries `where` selects, as a mailbox holds them (`d` deliveries, `m` messages). */
function deliveryRows(sql: Sql, where: ReturnType<Sql>, limit: number): Promise<(UnackedRow & { to_principal: string })[]> {
  return sql<(UnackedRow & { to_principal: string })[]>`
    select m.id, m.thread_id, m.sender, p.display_name as sender_name, m.recipient, m.body, m.created_at, m.attachments,
           pay.tx_hash as pay_tx, pay.network as pay_network, pay.payer as pay_payer, pay.amount::text as pay_amount,
           pay.explorer_url as pay_explorer, d.delivery_count, d.recipient as to_principal
    from deliveries d
    join messages m on m.id = d.message_id
    left join principals p on p.id = m.sender
    left join payments pay on pay.message_id = m.id
    where ${where}
    order by d.message_id
    limit ${limit}`;
}

/** A recipient's oldest unacknowledged messages, oldest first (to rebuild a mailbox). */
export function unacked(sql: Sql, recipient: string, limit: number): Promise<UnackedRow[]> {
  return deliveryRows(sql, sql`d.recipient = ${recipient}`, limit);
}

/**
 * Of these message ids, the ones committed, and every unacknowledged delivery of them (recipient in
 * `to_principal`), to finish the appends a dead node left (runtime/messaging/reconcile.ts).
 */
export async function committedDeliveries(sql: Sql, ids: string[]): Promise<{ committed: Set<string>; rows: (UnackedRow & { to_principal: string })[] }> {
  // in this order: the rows are read after the commit of every message found
  const found = await sql<{ id: bigint }[]>`select id from messages where id = any(${ids}::bigint[])`;
  const rows = await deliveryRows(sql, sql`d.message_id = any(${ids}::bigint[])`, 1_000_000);
  return { committed: new Set(found.map((r) => r.id.toString())), rows };
}

/** Write delivery counts back (never lowering one; an acknowledged delivery has no row left to write). */
export async function writeDeliveryCounts(sql: Sql, rows: { recipient: string; id: string; count: number }[]): Promise<void> {
  if (rows.length === 0) return;
  await retryOnDeadlock(() => sql`
    with relaxed as (select set_config('synchronous_commit', 'off', true) as s)
    update deliveries d set delivery_count = v.c
    from unnest(${rows.map((r) => r.recipient)}::text[], ${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.count)}::int[]) as v(r, m, c), relaxed
    where d.recipient = v.r and d.message_id = v.m and d.delivery_count < v.c and relaxed.s is not null`);
}

/** A page of a thread's history, newest first; one row more than asked tells whether more exist. */
export function history(sql: Sql, threadId: bigint, before: bigint | null, limit: number): Promise<MessageRow[]> {
  return sql<MessageRow[]>`
    select m.id, m.thread_id, m.sender, p.display_name as sender_name, m.recipient, m.body, m.created_at, m.attachments,
           pay.tx_hash as pay_tx, pay.network as pay_network, pay.payer as pay_payer, pay.amount::text as pay_amount,
           pay.explorer_url as pay_explorer
    from messages m left join principals p on p.id = m.sender left join payments pay on pay.message_id = m.id
    where m.thread_id = ${String(threadId)} ${before !== null ? sql`and m.id < ${String(before)}` : sql``}
    order by m.id desc
    limit ${limit + 1}`;
}
