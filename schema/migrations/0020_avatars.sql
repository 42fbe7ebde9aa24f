-- Avatars (issue 36): a principal's picture is one of its own uploaded images. `avatar_key` is a random key naming
-- it in its public address (/v1/avatars/<key>, served without credentials so a plain <img> shows it, and unguessable,
-- so only those shown an author object learn it). A new picture keeps the key; removing the picture drops it.
ALTER TABLE principals
  ADD COLUMN avatar_file bigint REFERENCES files (id) ON DELETE SET NULL,
  ADD COLUMN avatar_key  text UNIQUE;
