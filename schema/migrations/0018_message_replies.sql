-- Replies (issue 36; docs/ARCHITECTURE.md, "Replies"): the message a message answers, as it was when answered:
-- {"id": "msg_…", "from": {"id", "display_name"}, "body": its first 200 characters} (null: not a reply). Kept on the
-- row, so every answer built from it shows the quote with no join. Deleting the quoted message turns the quotes of
-- it in its thread into {"id", "from", "body": "", "deleted": true}.
ALTER TABLE messages ADD COLUMN reply jsonb;
