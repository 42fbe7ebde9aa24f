-- Names that say what serves every stream (issue 51): an inbox and a group are both streams, and a member's place in
-- one is its cursor. The tables and the ack function named for groups before inboxes became streams are renamed:
--   group_cursors   -> stream_cursors   (a member's cursor in a stream; thread_id 0 is its inbox)
--   group_acks      -> stream_acks      (acks above a cursor, out of order)
--   flock_group_ack -> flock_stream_ack (acknowledge one message, or through it)
-- A node of the release before keeps running beside this one during a rolling upgrade, and reads and writes the old
-- names: each old table name stays as a view of its new table (a one-table view Postgres updates through, inserts
-- with ON CONFLICT included), and the old function calls the new one. They go in the first release that no longer
-- runs beside 0.1.0 (docs/OPERATIONS.md, "Mixed versions").
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts):
-- Locks: group_cursors ACCESS EXCLUSIVE, group_acks ACCESS EXCLUSIVE
ALTER TABLE group_cursors RENAME TO stream_cursors;
ALTER TABLE stream_cursors RENAME CONSTRAINT group_cursors_pkey TO stream_cursors_pkey;
ALTER INDEX group_cursors_thread_idx RENAME TO stream_cursors_thread_idx;
ALTER TABLE group_acks RENAME TO stream_acks;
ALTER TABLE stream_acks RENAME CONSTRAINT group_acks_pkey TO stream_acks_pkey;

CREATE VIEW group_cursors AS SELECT member, thread_id, acked_seq, joined_seq, delivered_seq, expired FROM stream_cursors;
CREATE VIEW group_acks AS SELECT member, thread_id, seq FROM stream_acks;

-- Acknowledge message number `p_seq` of stream `p_thread` (0: the inbox) for `p_member`: every message up to it when
-- `p_through`, else that one. Returns the member's cursor after it (acked_seq), or -1 when the member may not
-- acknowledge it (no cursor there, or it came before they joined). Idempotent. The cursor moves over any run of
-- out-of-order acks it reaches.
CREATE FUNCTION flock_stream_ack(p_member text, p_thread bigint, p_seq bigint, p_through boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  c stream_cursors%ROWTYPE;
  upto bigint;
BEGIN
  -- the usual ack, in one statement: the next message, or a cumulative ack past the cursor
  UPDATE stream_cursors SET acked_seq = p_seq
  WHERE member = p_member AND thread_id = p_thread AND joined_seq < p_seq AND acked_seq < p_seq
    AND (p_through OR acked_seq = p_seq - 1)
  RETURNING * INTO c;
  IF NOT FOUND THEN
    SELECT * INTO c FROM stream_cursors WHERE member = p_member AND thread_id = p_thread FOR UPDATE;
    IF NOT FOUND OR p_seq <= c.joined_seq THEN
      RETURN -1;
    END IF;
    IF p_seq <= c.acked_seq THEN
      RETURN c.acked_seq;
    END IF;
    IF NOT p_through AND p_seq > c.acked_seq + 1 THEN
      INSERT INTO stream_acks (member, thread_id, seq) VALUES (p_member, p_thread, p_seq) ON CONFLICT DO NOTHING;
      RETURN c.acked_seq;
    END IF;
    -- (the cursor reached p_seq - 1 between the two statements)
    UPDATE stream_cursors SET acked_seq = p_seq WHERE member = p_member AND thread_id = p_thread;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM stream_acks WHERE member = p_member AND thread_id = p_thread) THEN
    RETURN p_seq;
  END IF;
  upto := p_seq;
  WHILE EXISTS (SELECT 1 FROM stream_acks WHERE member = p_member AND thread_id = p_thread AND seq = upto + 1) LOOP
    upto := upto + 1;
  END LOOP;
  DELETE FROM stream_acks WHERE member = p_member AND thread_id = p_thread AND seq <= upto;
  IF upto > p_seq THEN
    UPDATE stream_cursors SET acked_seq = upto WHERE member = p_member AND thread_id = p_thread;
  END IF;
  RETURN upto;
END $$;

-- The release before's name for it (see above).
CREATE OR REPLACE FUNCTION flock_group_ack(p_member text, p_thread bigint, p_seq bigint, p_through boolean)
RETURNS bigint LANGUAGE sql AS $$ SELECT flock_stream_ack(p_member, p_thread, p_seq, p_through) $$;

-- An inbox's first message makes its cursor: under the new name.
CREATE OR REPLACE FUNCTION flock_inbox_take(p_principal text, p_count bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  top bigint;
  made boolean;
BEGIN
  INSERT INTO inboxes AS i (principal, last_seq) VALUES (p_principal, p_count)
  ON CONFLICT (principal) DO UPDATE SET last_seq = i.last_seq + p_count
  RETURNING last_seq, (xmax = 0) INTO top, made;
  IF made THEN
    INSERT INTO stream_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    VALUES (p_principal, 0, 0, 0, 0) ON CONFLICT DO NOTHING;
  END IF;
  RETURN top;
END $$;
