-- Scoped, named tokens (issue 53): a principal may hold named tokens beside the one registration or sign-in gave it,
-- each with its scopes (schema/tokens.ts). `scopes` null is a full token: every scope its principal may hold, as
-- every token made before this migration is. A named token has a public `id` (what GET /v1/tokens lists and
-- DELETE /v1/tokens/{id} revokes) and a `name`; a full token has neither. `last_used_at` is written when a node
-- looks the token up (a cache miss) and it was last written over an hour before.
-- Locks: tokens ACCESS EXCLUSIVE
ALTER TABLE tokens
  ADD COLUMN id           text UNIQUE,
  ADD COLUMN name         text,
  ADD COLUMN scopes       text[],
  ADD COLUMN last_used_at timestamptz;
