-- Messages partitioned by time (issue 34; docs/ARCHITECTURE.md, "Retention"): `messages` becomes a table
-- partitioned by range of id. Ids are time-ordered (runtime/ids.ts: milliseconds since 2026-01-01 in the bits above
-- the 22 low ones), so an id range is a time range, a lookup by id reads one partition, and a range past retention
-- goes by dropping its partition: no DELETE over the hot table, no vacuum after it.
--
-- The rows already here stay where they are: the old table becomes the first partition, holding every id below
-- this moment (attached, not copied). runtime/retention/maintainer.ts creates the partitions after it ahead of time
-- and drops those past FLOCK_RETENTION_MESSAGES. `messages_default` catches an id no partition covers (a clock far
-- ahead); the maintainer moves such rows into the partition it creates for them.
--
-- A unique index of a partitioned table must hold the partition key, so the per-stream numbers (recipient, seq) and
-- (thread_id, seq) are plain indexes now: their uniqueness was never what kept them unique. A number is taken
-- under its inbox's or group's row lock (inboxes.last_seq, groups.last_seq: runtime/messaging/store.ts).

ALTER TABLE messages RENAME TO messages_before_0014;
ALTER INDEX messages_pkey RENAME TO messages_before_0014_pkey;
-- the partitioned table's indexes are built on it when it is attached (its unique number indexes go: above)
DROP INDEX messages_group_seq_idx;
DROP INDEX messages_inbox_seq_idx;
DROP INDEX messages_thread_id_idx;
DROP INDEX messages_sender_idempotency_idx;

CREATE TABLE messages (
  id              bigint NOT NULL,
  thread_id       bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  sender          text NOT NULL,
  recipient       text,
  body            text NOT NULL,
  created_at      timestamptz NOT NULL,
  seq             bigint,
  attachments     jsonb,
  idempotency_key text,
  PRIMARY KEY (id)
) PARTITION BY RANGE (id);

CREATE INDEX messages_thread_idx ON messages (thread_id, id DESC);
CREATE INDEX messages_group_number_idx ON messages (thread_id, seq) WHERE seq IS NOT NULL AND recipient IS NULL;
CREATE INDEX messages_inbox_number_idx ON messages (recipient, seq) WHERE seq IS NOT NULL AND recipient IS NOT NULL;
CREATE INDEX messages_sender_key_idx ON messages (sender, idempotency_key) WHERE idempotency_key IS NOT NULL;

DO $$
DECLARE
  upto bigint;
BEGIN
  -- every id made before now (and any above it already stored, from a clock ahead) is the old table's
  SELECT greatest(coalesce(max(id) + 1, 0), ((extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1767225600000) << 22)
    INTO upto FROM messages_before_0014;
  -- the old table's own constraint would be a second foreign key on the partition: the partitioned table's serves
  ALTER TABLE messages_before_0014 DROP CONSTRAINT IF EXISTS messages_thread_id_fkey;
  EXECUTE format('ALTER TABLE messages ATTACH PARTITION messages_before_0014 FOR VALUES FROM (MINVALUE) TO (%s)', upto);
END $$;

CREATE TABLE messages_default PARTITION OF messages DEFAULT;

-- What retention has done, per stream member: how many unacknowledged messages went past the horizon since the
-- member last read (a long poll's answer and a socket's frame report it once, then it is 0 again).
ALTER TABLE group_cursors ADD COLUMN expired bigint NOT NULL DEFAULT 0;
-- the maintainer finds a group's members' cursors by the group (a member's own are found by the primary key)
CREATE INDEX group_cursors_thread_idx ON group_cursors (thread_id);

-- The horizon the maintainer last moved the cursors to (runtime/retention/maintainer.ts): the next pass moves
-- them over the messages between it and the new horizon, and no further back.
CREATE TABLE retention_marks (
  name    text PRIMARY KEY,
  horizon bigint NOT NULL
);
