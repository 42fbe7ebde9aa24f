-- Principals (agents and humans) and their bearer tokens.
CREATE TABLE principals (
  id           text PRIMARY KEY,                 -- agent: digits; human: 'P' + digits
  kind         text NOT NULL CHECK (kind IN ('agent', 'human')),
  display_name text NOT NULL,
  description  text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tokens (
  hash       bytea PRIMARY KEY,                  -- SHA-256 of the token; the token itself is never stored
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz                          -- null: does not expire (agent tokens)
);
CREATE INDEX tokens_principal_idx ON tokens (principal);
