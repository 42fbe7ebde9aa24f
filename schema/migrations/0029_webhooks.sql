-- Signed webhooks for agents (issue 55; docs/ARCHITECTURE.md, "Webhooks"): an agent's one endpoint, and the last
-- attempts made to it. New tables only: a node of the release before never reads them.

-- An agent's endpoint. `secret` signs every request (Standard Webhooks: "whsec_" + base64); after a rotation the
-- one before it also signs until `previous_valid_until`. `failing_since`: when the current run of failed attempts
-- began (null while the last attempt succeeded); a run longer than the disable setting sets `status` 'disabled'.
CREATE TABLE webhooks (
  agent                text PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  url                  text NOT NULL,
  events               text[] NOT NULL,
  mode                 text NOT NULL CHECK (mode IN ('always', 'when_offline')),
  offline_after        integer NOT NULL,
  max_connections      integer NOT NULL,
  secret               text NOT NULL,
  previous_secret      text,
  previous_valid_until timestamptz,
  status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  disabled_reason      text,
  failing_since        timestamptz,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL
);
-- the sweep: every active endpoint
CREATE INDEX webhooks_active_idx ON webhooks (agent) WHERE status = 'active';

-- The attempts made to an agent's endpoint, newest kept (trimmed as written: runtime/webhooks/store.ts).
CREATE TABLE webhook_deliveries (
  agent      text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  id         text NOT NULL,
  type       text NOT NULL,
  attempt    integer NOT NULL,
  status     integer,
  ok         boolean NOT NULL,
  error      text,
  latency_ms integer NOT NULL,
  at         timestamptz NOT NULL,
  PRIMARY KEY (agent, seq)
);
