-- Passkeys (WebAuthn; issue 36; docs/ARCHITECTURE.md, "Humans and sign-in"): a person signs up and in with a
-- passkey instead of a wallet, and may have both. A passkey is the public key of one credential of one person, with
-- its signature counter; its private key never leaves the person's authenticator.
CREATE TABLE passkeys (
  id           text PRIMARY KEY,                 -- the credential id, base64url
  principal    text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  public_key   bytea NOT NULL,                   -- COSE
  counter      bigint NOT NULL DEFAULT 0,
  transports   text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX passkeys_principal_idx ON passkeys (principal);

-- A ceremony under way: the challenge handed out, what it is for, and until when it may be answered (once).
-- Registering: `principal` is the person adding a passkey, or the id a new person will get (`new_user`), with the
-- display name asked for. Signing in: neither.
CREATE TABLE passkey_challenges (
  id           text PRIMARY KEY,
  challenge    text NOT NULL,
  purpose      text NOT NULL CHECK (purpose IN ('register', 'login')),
  principal    text,
  new_user     boolean NOT NULL DEFAULT false,
  display_name text,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX passkey_challenges_expires_idx ON passkey_challenges (expires_at);
