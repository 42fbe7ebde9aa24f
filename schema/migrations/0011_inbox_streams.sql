-- One delivery model (docs/ARCHITECTURE.md, "Messages"): a principal's inbox is a stream like a group. A direct
-- message carries a number in its recipient's inbox (`messages.seq`, as a group message carries one in its group),
-- and what the recipient has acknowledged is a cursor, the group_cursors row (member, thread_id = 0). The
-- `deliveries` rows (one per unacknowledged direct message) are gone.

-- Each inbox's sequence, raised under the row's lock by the statement that stores a batch (flock_inbox_take), so
-- committed numbers have no gaps and follow the commit order, as groups.last_seq does for a group.
CREATE TABLE inboxes (
  principal text PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  last_seq  bigint NOT NULL
);

-- Numbers are per group for group messages and per recipient for direct ones.
DROP INDEX messages_thread_seq_idx;
CREATE UNIQUE INDEX messages_group_seq_idx ON messages (thread_id, seq) WHERE seq IS NOT NULL AND recipient IS NULL;
CREATE UNIQUE INDEX messages_inbox_seq_idx ON messages (recipient, seq) WHERE seq IS NOT NULL AND recipient IS NOT NULL;

-- How often a message was handed out, kept only past its second hand-out (a message numbered up to the cursor's
-- delivered_seq with no row here was handed out once). Rows at or below the cursor are dropped as it moves.
CREATE TABLE handout_counts (
  member    text NOT NULL,
  thread_id bigint NOT NULL,
  seq       bigint NOT NULL,
  count     integer NOT NULL,
  PRIMARY KEY (member, thread_id, seq)
);

-- Existing direct messages are numbered in their recipients' inboxes in id order.
WITH n AS (
  SELECT id, row_number() OVER (PARTITION BY recipient ORDER BY id) AS seq FROM messages WHERE recipient IS NOT NULL
)
UPDATE messages m SET seq = n.seq FROM n WHERE m.id = n.id;

INSERT INTO inboxes (principal, last_seq)
SELECT m.recipient, max(m.seq) FROM messages m JOIN principals p ON p.id = m.recipient
WHERE m.recipient IS NOT NULL GROUP BY m.recipient;

-- Each inbox's cursor stops before its first unacknowledged message (every message if none is outstanding)...
INSERT INTO group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
SELECT i.principal, 0, coalesce(u.first - 1, i.last_seq), 0, greatest(coalesce(u.first - 1, i.last_seq), coalesce(u.handed, 0))
FROM inboxes i LEFT JOIN (
  SELECT d.recipient, min(m.seq) AS first, max(m.seq) FILTER (WHERE d.delivery_count > 0) AS handed
  FROM deliveries d JOIN messages m ON m.id = d.message_id AND m.recipient = d.recipient
  GROUP BY d.recipient
) u ON u.recipient = i.principal;

-- ... and what was acknowledged above it out of order is kept as such,
INSERT INTO group_acks (member, thread_id, seq)
SELECT m.recipient, 0, m.seq FROM messages m JOIN group_cursors c ON c.member = m.recipient AND c.thread_id = 0
WHERE m.recipient IS NOT NULL AND m.seq > c.acked_seq
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.recipient = m.recipient AND d.message_id = m.id);

-- with the counts of what was handed out more than once.
INSERT INTO handout_counts (member, thread_id, seq, count)
SELECT d.recipient, 0, m.seq, d.delivery_count
FROM deliveries d JOIN messages m ON m.id = d.message_id AND m.recipient = d.recipient
WHERE d.delivery_count > 1;

-- Group messages stored before migration 0010 (no number) and still unacknowledged had deliveries rows: they stay in
-- their threads' history and are no longer handed out.
DROP TABLE deliveries;

-- Take `p_count` numbers in `p_principal`'s inbox (its first message makes the inbox and its cursor); returns the
-- last one taken. Called by the statement that stores the messages, so the numbers roll back with it.
CREATE FUNCTION flock_inbox_take(p_principal text, p_count bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  top bigint;
  made boolean;
BEGIN
  INSERT INTO inboxes AS i (principal, last_seq) VALUES (p_principal, p_count)
  ON CONFLICT (principal) DO UPDATE SET last_seq = i.last_seq + p_count
  RETURNING last_seq, (xmax = 0) INTO top, made;
  IF made THEN
    INSERT INTO group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    VALUES (p_principal, 0, 0, 0, 0) ON CONFLICT DO NOTHING;
  END IF;
  RETURN top;
END $$;
