// Postgres side of acks (docs/ARCHITECTURE.md, "A message from send to ack"): a member's cursor in a stream
// (stream_cursors: its inbox, thread 0, or a group) takes the messages it acknowledges; an ack above the cursor waits
// out of order in stream_acks until the cursor reaches it (flock_stream_ack, migrations 0010 and 0024). A batch of acks
// is one statement.
import type { Sql } from "../db/client.ts";
import { retryOnDeadlock } from "../db/errors.ts";

/** An ack: the recipient, the message, and whether it also acknowledges the stream's earlier messages. */
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
 * cursor in the message's stream (flock_stream_ack, migration 0024): a direct message's is the recipient's inbox
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
  // in. Every other ack goes through flock_stream_ack, one call each (in the select list, never on a cursor `up` moved: those are
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
      update stream_cursors gc set acked_seq = solo.seq from solo
      where gc.member = solo.recipient and gc.thread_id = solo.stream and gc.joined_seq < solo.seq
        and gc.acked_seq < solo.seq and (solo.through = 1 or gc.acked_seq = solo.seq - 1)
        and not exists (select 1 from stream_acks a where a.member = gc.member and a.thread_id = gc.thread_id)
      returning solo.n
    )
    select mm.n::int as n, mm.stream, mm.seq, case when mm.n in (select n from up) then mm.seq
      else flock_stream_ack(mm.recipient, mm.stream, mm.seq, mm.through = 1 and mm.sender <> mm.recipient) end as acked
    from mm`,
  );
  const out: AckOutcome[] = items.map(() => false);
  for (const r of rows) {
    if (r.stream === null || r.seq === null || r.acked === null || Number(r.acked) < 0) continue;
    out[r.n - 1] = { thread: BigInt(r.stream), seq: Number(r.seq), acked: Number(r.acked) };
  }
  return out;
}
