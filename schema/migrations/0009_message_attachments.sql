-- The files a message carries, as its recipients see them: a JSON array of {id, name, content_type, size} in
-- the order the sender gave (null when none). Kept with the message, so a mailbox rebuilt from Postgres, history
-- and the threads list show them without reading the files table; the files themselves are shared with the
-- recipients (file_shares) in the statement that stores the message.
ALTER TABLE messages ADD COLUMN attachments jsonb;
