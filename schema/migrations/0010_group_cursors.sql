-- Group messages stored once (docs/ARCHITECTURE.md, "Group messages"): a group message is its row, with a number
-- in its group's sequence, and no `deliveries` rows. What a member has acknowledged is a cursor per group.
--
-- `groups.last_seq` is the group's sequence. The statement that stores a batch of group messages raises it under the
-- group row's lock and numbers the batch's messages from it: a failed statement takes its increment back with it, so
-- the committed numbers have no gaps, and as the lock is held until the commit, their order is the commit order.
ALTER TABLE groups ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;

-- null for direct messages and for group messages stored before this migration (those keep their deliveries rows)
ALTER TABLE messages ADD COLUMN seq bigint;
-- Reading a group past a cursor.
CREATE UNIQUE INDEX messages_thread_seq_idx ON messages (thread_id, seq) WHERE seq IS NOT NULL;

-- A member's place in a group. No foreign keys, like deliveries: leaving a group and deleting an account remove the
-- rows themselves (handlers/groups.ts, runtime/accounts/delete.ts).
CREATE TABLE group_cursors (
  member        text NOT NULL,
  thread_id     bigint NOT NULL,
  -- every message of the group numbered up to here is acknowledged by this member (or is their own)
  acked_seq     bigint NOT NULL,
  -- the group's last_seq when the member joined: they receive, and may acknowledge, only what comes after
  joined_seq    bigint NOT NULL,
  -- messages numbered up to here may have been delivered to the member already: delivered again, they count 2.
  -- While one of the member's sockets takes the group live, it is the largest bigint (runtime/messaging/group-store.ts).
  delivered_seq bigint NOT NULL,
  PRIMARY KEY (member, thread_id)
);

-- Acknowledgements above a member's cursor, out of order (a plain ack of a later message); the cursor takes them in
-- as it reaches them.
CREATE TABLE group_acks (
  member    text NOT NULL,
  thread_id bigint NOT NULL,
  seq       bigint NOT NULL,
  PRIMARY KEY (member, thread_id, seq)
);

-- Every current member starts with nothing outstanding under the new scheme: their older group messages are still
-- deliveries rows and are acknowledged as before.
INSERT INTO group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
SELECT tm.principal, tm.thread_id, 0, 0, 0 FROM thread_members tm JOIN groups g ON g.id = tm.thread_id
ON CONFLICT DO NOTHING;

-- Acknowledge message number `p_seq` of group `p_thread` for `p_member`: every message up to it when `p_through`,
-- else that one. Returns the member's cursor after it (acked_seq), or -1 when the member may not acknowledge it (not
-- a member, or it came before they joined). Idempotent. The cursor moves over any run of out-of-order acks it reaches.
CREATE FUNCTION flock_group_ack(p_member text, p_thread bigint, p_seq bigint, p_through boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  c group_cursors%ROWTYPE;
  upto bigint;
BEGIN
  -- the usual ack, in one statement: the next message, or a cumulative ack past the cursor
  UPDATE group_cursors SET acked_seq = p_seq
  WHERE member = p_member AND thread_id = p_thread AND joined_seq < p_seq AND acked_seq < p_seq
    AND (p_through OR acked_seq = p_seq - 1)
  RETURNING * INTO c;
  IF NOT FOUND THEN
    SELECT * INTO c FROM group_cursors WHERE member = p_member AND thread_id = p_thread FOR UPDATE;
    IF NOT FOUND OR p_seq <= c.joined_seq THEN
      RETURN -1;
    END IF;
    IF p_seq <= c.acked_seq THEN
      RETURN c.acked_seq;
    END IF;
    IF NOT p_through AND p_seq > c.acked_seq + 1 THEN
      INSERT INTO group_acks (member, thread_id, seq) VALUES (p_member, p_thread, p_seq) ON CONFLICT DO NOTHING;
      RETURN c.acked_seq;
    END IF;
    -- (the cursor reached p_seq - 1 between the two statements)
    UPDATE group_cursors SET acked_seq = p_seq WHERE member = p_member AND thread_id = p_thread;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM group_acks WHERE member = p_member AND thread_id = p_thread) THEN
    RETURN p_seq;
  END IF;
  upto := p_seq;
  WHILE EXISTS (SELECT 1 FROM group_acks WHERE member = p_member AND thread_id = p_thread AND seq = upto + 1) LOOP
    upto := upto + 1;
  END LOOP;
  DELETE FROM group_acks WHERE member = p_member AND thread_id = p_thread AND seq <= upto;
  IF upto > p_seq THEN
    UPDATE group_cursors SET acked_seq = upto WHERE member = p_member AND thread_id = p_thread;
  END IF;
  RETURN upto;
END $$;
