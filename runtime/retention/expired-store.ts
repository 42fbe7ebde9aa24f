// What goes with messages past the horizon besides their rows (docs/ARCHITECTURE.md, "Retention"): the answers kept
// for the Idempotency-Keys they were sent with lose their bodies, and the rows saying which files they carried
// (message_files, migration 0022) are removed. Reads already stop at the horizon (a file no kept message carries
// answers 404 at once: runtime/files/records-store.ts); these are the maintainer's tidying, each in a short
// transaction.
import type { Sql } from "../db/client.ts";
import { keptWithoutBody } from "../messaging/edits-store.ts";

/**
 * The answers kept for the sends of messages with ids from `from` up to `to` (they went past the horizon): a replay
 * of such a send answers the message without body, files, quote or reactions. Read by the messages' primary key
 * over the range, before their partitions are dropped; how many answers changed.
 */
export async function blankExpiredAnswers(tx: Sql, from: bigint, to: bigint): Promise<number> {
  const rows = await tx`
    update idempotency_keys k set body = ${keptWithoutBody(tx, null)}
    from messages m
    where m.id >= ${String(from)} and m.id < ${String(to)} and m.idempotency_key is not null
      and k.principal = m.sender and k.key = m.idempotency_key and k.status = 201
      and left(k.body, length('{"id":"msg_' || m.id || '"')) = '{"id":"msg_' || m.id || '"'`;
  return rows.count;
}

/** At most `limit` of the rows of files carried by messages below `mark` (by message_files_message_idx); how many. */
export async function forgetExpiredFiles(tx: Sql, mark: bigint, limit: number): Promise<number> {
  const rows = await tx`
    delete from message_files where (file_id, thread_id, message_id) in (
      select file_id, thread_id, message_id from message_files where message_id < ${String(mark)} order by message_id limit ${limit})`;
  return rows.count;
}
