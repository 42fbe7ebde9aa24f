-- Humans (principals of kind 'human', id 'P' + digits) sign in with a wallet or through the identity provider.
-- Every row here hangs off principals with ON DELETE CASCADE: deleting an account deletes them with it.

-- Wallets of human users: external (signed in with EIP-4361) or embedded (provisioned by the identity provider).
-- A wallet belongs to at most one user; the address is stored lowercase.
CREATE TABLE wallets (
  address    text PRIMARY KEY CHECK (address ~ '^0x[0-9a-f]{40}$'),
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  kind       text NOT NULL CHECK (kind IN ('external', 'embedded')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX wallets_principal_idx ON wallets (principal);

-- Identity-provider subjects (e.g. provider 'privy', subject 'did:privy:...') mapped to one user each.
CREATE TABLE identities (
  provider   text NOT NULL,
  subject    text NOT NULL,
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, subject)
);
CREATE INDEX identities_principal_idx ON identities (principal);

-- Wallet sign-in challenges: each nonce is accepted once (deleted when used) and only before expires_at.
CREATE TABLE wallet_nonces (
  nonce      text PRIMARY KEY,
  address    text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX wallet_nonces_expires_idx ON wallet_nonces (expires_at);

-- Uploaded files. The bytes live in the file store under their SHA-256 (content addressed, so two uploads of
-- the same bytes share one blob); a blob is removed when the last row naming it goes.
CREATE TABLE files (
  id           bigint PRIMARY KEY,
  owner        text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  name         text NOT NULL,
  content_type text NOT NULL,
  size         bigint NOT NULL CHECK (size >= 0),
  sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  created_at   timestamptz NOT NULL
);
CREATE INDEX files_owner_idx ON files (owner, id DESC);
CREATE INDEX files_sha256_idx ON files (sha256);

-- Who else may download a file (recipients of a message that carried it as an attachment).
CREATE TABLE file_shares (
  file_id    bigint NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (file_id, principal)
);
CREATE INDEX file_shares_principal_idx ON file_shares (principal);
