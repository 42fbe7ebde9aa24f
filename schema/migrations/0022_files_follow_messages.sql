-- Files follow the messages that carry them (issue 50; docs/ARCHITECTURE.md, "Files"). Who else than its owner may
-- read a file was a share per file and principal, given by a send and never taken back by leaving a group, by being
-- removed from one, by retention, nor (for a direct message) by deleting a group's message. Now a principal reads a
-- file it does not own while one live message carrying it reaches it:
--   a share (file, principal, thread): the file was sent to the principal in that thread (a member who joins later
--     was not sent what came before: no share);
--   the principal is still a member of that thread (thread_members);
--   a message of that thread carrying the file is kept: in message_files, within retention (message_id at or above
--     the horizon: ids are time-ordered), not deleted (a delete removes its rows).
-- Each step is one primary-key probe, so the check costs the same whatever a thread or a history holds.
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts). principals and files are ACCESS EXCLUSIVE:
-- dropping the old file_shares drops its foreign keys' triggers on them, which takes that lock (a deadlock with a
-- send of 0.1.0 that held principals while waiting for a table this migration held, when it was not declared):
-- Locks: file_shares ACCESS EXCLUSIVE, messages SHARE ROW EXCLUSIVE, thread_members SHARE ROW EXCLUSIVE, files ACCESS EXCLUSIVE, threads SHARE ROW EXCLUSIVE, principals ACCESS EXCLUSIVE

-- One row per file a message carries (a message's attachments, as keys). A delete removes its message's rows; the
-- retention maintainer removes those of messages past the horizon (by message_files_message_idx). No foreign key to
-- messages: its partitions are dropped whole.
CREATE TABLE message_files (
  file_id    bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  thread_id  bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  message_id bigint NOT NULL,
  PRIMARY KEY (file_id, thread_id, message_id)
);
CREATE INDEX message_files_message_idx ON message_files (message_id);

-- The messages kept, their files as sent (only the sender's own files were ever attached).
INSERT INTO message_files (file_id, thread_id, message_id)
SELECT DISTINCT f.id, m.thread_id, m.id
FROM messages m
  CROSS JOIN LATERAL jsonb_array_elements(m.attachments) a
  JOIN files f ON a ->> 'id' ~ '^file_[0-9]{1,18}$' AND f.id = substr(a ->> 'id', 6)::bigint AND f.owner = m.sender
WHERE m.attachments IS NOT NULL AND jsonb_typeof(m.attachments) = 'array' AND m.deleted_at IS NULL
  AND EXISTS (SELECT 1 FROM threads t WHERE t.id = m.thread_id);

-- Shares by thread. The old ones are kept where their principal is still a member of a thread with a kept message
-- carrying the file; the rest (a group left, a member removed, messages deleted) go.
ALTER TABLE file_shares RENAME TO file_shares_before_0022;
ALTER INDEX file_shares_pkey RENAME TO file_shares_before_0022_pkey;
DROP INDEX file_shares_principal_idx;

CREATE TABLE file_shares (
  file_id    bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  thread_id  bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (file_id, principal, thread_id)
);
-- a member leaving a group drops its shares there; an account's go by cascade
CREATE INDEX file_shares_principal_idx ON file_shares (principal, thread_id);

INSERT INTO file_shares (file_id, principal, thread_id, created_at)
SELECT s.file_id, s.principal, mf.thread_id, min(s.created_at)
FROM file_shares_before_0022 s
  JOIN message_files mf ON mf.file_id = s.file_id
  JOIN thread_members tm ON tm.thread_id = mf.thread_id AND tm.principal = s.principal
GROUP BY s.file_id, s.principal, mf.thread_id;

DROP TABLE file_shares_before_0022;

-- Beside a node of 0.1.0 (a rolling upgrade: docs/OPERATIONS.md, "Mixed versions"), whose statements know neither
-- message_files nor a share's thread. Triggers keep what it writes right, and serve this release the same way:
-- - its send shares a file as (file, principal), with no thread: the NOT NULL thread would fail its whole batch, so
--   such a share is left out (the statement goes on);
-- - a message stored with attachments but no message_files row of its own by the end of its statement (a send of
--   this release writes them in that statement) gets them, with a share for each recipient as 0.1.0 gave them: the
--   direct message's recipient, or the group's other members. A deleted message (a row moved between partitions by
--   the retention maintainer keeps its deleted_at) gets none, and a message without attachments never runs it;
-- - a message deleted (by either release) takes its message_files rows with it, so its files are no longer carried;
-- - a member leaving or removed from a thread (by either release) takes its shares there with it.
-- Each function keeps the schema it was made in, so a session with another search_path (psql, tools) runs it too.
CREATE FUNCTION flock_share_without_thread() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  RETURN NULL;
END $$;
CREATE TRIGGER file_shares_without_thread BEFORE INSERT ON file_shares
  FOR EACH ROW WHEN (NEW.thread_id IS NULL) EXECUTE FUNCTION flock_share_without_thread();

CREATE FUNCTION flock_files_of_older_send() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF jsonb_typeof(NEW.attachments) <> 'array' OR EXISTS (SELECT 1 FROM message_files WHERE message_id = NEW.id) THEN
    RETURN NULL;
  END IF;
  INSERT INTO message_files (file_id, thread_id, message_id)
  SELECT DISTINCT f.id, NEW.thread_id, NEW.id
  FROM jsonb_array_elements(NEW.attachments) a
    JOIN files f ON a ->> 'id' ~ '^file_[0-9]{1,18}$' AND f.id = substr(a ->> 'id', 6)::bigint AND f.owner = NEW.sender
  ON CONFLICT DO NOTHING;
  INSERT INTO file_shares (file_id, principal, thread_id)
  SELECT mf.file_id, r.principal, NEW.thread_id
  FROM message_files mf
    JOIN (SELECT NEW.recipient AS principal WHERE NEW.recipient IS NOT NULL
          UNION
          SELECT tm.principal FROM thread_members tm WHERE NEW.recipient IS NULL AND tm.thread_id = NEW.thread_id AND tm.principal <> NEW.sender) r ON true
  WHERE mf.message_id = NEW.id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_files_of_older_send AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.attachments IS NOT NULL AND NEW.deleted_at IS NULL) EXECUTE FUNCTION flock_files_of_older_send();

CREATE FUNCTION flock_uncarry_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM message_files WHERE message_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER messages_deleted_uncarry AFTER UPDATE OF deleted_at ON messages
  FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL AND NEW.attachments IS NOT NULL) EXECUTE FUNCTION flock_uncarry_deleted();

CREATE FUNCTION flock_unshare_departed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM file_shares WHERE principal = OLD.principal AND thread_id = OLD.thread_id;
  RETURN NULL;
END $$;
CREATE TRIGGER thread_members_departed_unshare AFTER DELETE ON thread_members
  FOR EACH ROW EXECUTE FUNCTION flock_unshare_departed();
