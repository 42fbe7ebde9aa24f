-- Web Push for people (issue 55; docs/ARCHITECTURE.md, "Web Push"). A person's browsers' push subscriptions (RFC 8030:
-- the push service's endpoint, and the RFC 8291 keys a payload is encrypted to), at most FLOCK_PUSH_SUBSCRIPTIONS each
-- (counted on insert). An endpoint is one browser's: subscribing it again (another person signed in there) moves it.
-- The VAPID key pair (RFC 8292) every node signs with when the configuration gives none: made once by the first node
-- that needs it, one row, read by every node. New tables only: a node of the release before never reads them.
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts):
-- Locks: principals SHARE ROW EXCLUSIVE
CREATE TABLE push_subscriptions (
  endpoint   text PRIMARY KEY,
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  p256dh     text NOT NULL,
  auth       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX push_subscriptions_principal_idx ON push_subscriptions (principal);

CREATE TABLE push_vapid_keys (
  id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  public_key  text NOT NULL,
  private_key text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
