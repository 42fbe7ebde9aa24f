-- A delivery row now lives exactly as long as its message is unacknowledged: an ack deletes it. Measured on
-- this machine, updating `acked_at` cost ~8.5 us a row (non-HOT: the partial index's predicate changes) where a
-- delete costs ~0.5 us, and the two foreign keys cost ~10 of the ~14 us each inserted row took (one key-share
-- lookup per key per row: a group send inserts a row per member). Without them:
-- - a principal's deletion removes its deliveries itself (runtime/accounts/delete.ts), inside its transaction
--   and once more after the commit for a send that raced it; a row that still slips through names an id that
--   is never reused and that no one can fetch any more;
-- - messages are never deleted, so no delivery can outlive its message.
-- The primary key (recipient, message_id) is now the mailbox rebuild's index: every row is unacknowledged.
DELETE FROM deliveries WHERE acked_at IS NOT NULL;
DROP INDEX IF EXISTS deliveries_unacked_idx;
ALTER TABLE deliveries
  DROP CONSTRAINT IF EXISTS deliveries_recipient_fkey,
  DROP CONSTRAINT IF EXISTS deliveries_message_id_fkey,
  DROP COLUMN acked_at;
