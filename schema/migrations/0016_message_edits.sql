-- Edit and delete (issue 36; docs/ARCHITECTURE.md, "Edits and deletes"): a sender may change a message's body
-- within 48 hours of sending it, and delete it at any time. A deleted message stays in history as a tombstone (its
-- body emptied, its files no longer carried); both columns are null until then. On the partitioned table the
-- columns reach every partition, and adding them rewrites nothing (no default).
ALTER TABLE messages ADD COLUMN edited_at timestamptz;
ALTER TABLE messages ADD COLUMN deleted_at timestamptz;
