-- Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field"; runtime/http/idempotency.ts): the
-- first answer to each key a principal sent with a creating request, kept 24 hours. A row with no status is a
-- request still running on node `owner`.
CREATE TABLE idempotency_keys (
  principal   text NOT NULL,
  key         text NOT NULL,
  fingerprint bytea NOT NULL,
  owner       text NOT NULL,
  status      integer,
  body        text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  started_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (principal, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- A message sent with a key carries it, so a retry after a node died between the commit and the answer finds the
-- message instead of storing it again. Not unique: the claim above already lets one request at a time run a key,
-- and a unique violation would fail the whole batch statement the message was stored in.
ALTER TABLE messages ADD COLUMN idempotency_key text;
CREATE INDEX messages_sender_idempotency_idx ON messages (sender, idempotency_key) WHERE idempotency_key IS NOT NULL;
