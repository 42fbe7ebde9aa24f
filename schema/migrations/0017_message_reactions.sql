-- Reactions on messages (issue 36; docs/ARCHITECTURE.md, "Reactions"): who reacted with what, kept on the message
-- row as {"<emoji>": ["<principal id>", ...], ...} (null: none), so every answer built from the row carries them
-- without a join, they go with the message's partition at retention, and a reaction changes one row under its lock.
ALTER TABLE messages ADD COLUMN reactions jsonb;
