-- idempotency_keys is a queue of short-lived rows: every keyed create inserts one, retention may empty its kept
-- answer (an update), and the sweep deletes it once FLOCK_IDEMPOTENCY_WINDOW has passed (runtime/http/idempotency.ts).
-- At a fleet's rates that is tens of thousands of dead rows a minute. Left to the defaults (a vacuum once a fifth of
-- the table is dead, pages packed full) the table and its indexes grew through a whole soak while the live rows
-- stayed level. Pages keep room for the answer's update in place (a heap-only update: no new index entries), and
-- the table is vacuumed once 2% of it (at least 1,000 rows) is dead or newly inserted.
--
-- The table lock it takes, before it runs (runtime/db/migration-locks.ts): storage parameters need only this one, so
-- sends and claims go on meanwhile.
-- Locks: idempotency_keys SHARE UPDATE EXCLUSIVE
ALTER TABLE idempotency_keys SET (
  fillfactor = 70,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_analyze_scale_factor = 0.05
);
