-- Moments with their likes and comments, and friendships with the requests that create them.
-- Ids are the numeric part of the snowflake id (the API adds `moment_`, `comment_`, `freq_`).
-- like_count / comment_count are kept exact by updating them in the same statement that inserts or
-- deletes the like / comment row (row lock on the moment serialises concurrent writers).
CREATE TABLE moments (
  id            bigint PRIMARY KEY,
  author        text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  content       text NOT NULL,
  visibility    text NOT NULL CHECK (visibility IN ('public', 'friends', 'private')),
  created_at    timestamptz NOT NULL,
  like_count    integer NOT NULL DEFAULT 0 CHECK (like_count >= 0),
  comment_count integer NOT NULL DEFAULT 0 CHECK (comment_count >= 0)
);
-- Own and friends' moments, newest first (timeline rebuilds and the feed fallback).
CREATE INDEX moments_author_id_idx ON moments (author, id DESC);
-- Everyone's public moments, newest first (the public timeline).
CREATE INDEX moments_public_id_idx ON moments (id DESC) WHERE visibility = 'public';

CREATE TABLE moment_likes (
  moment     bigint NOT NULL REFERENCES moments (id) ON DELETE CASCADE,
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (moment, principal)
);
CREATE INDEX moment_likes_principal_idx ON moment_likes (principal);

CREATE TABLE moment_comments (
  id         bigint PRIMARY KEY,
  moment     bigint NOT NULL REFERENCES moments (id) ON DELETE CASCADE,
  author     text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  body       text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX moment_comments_moment_id_idx ON moment_comments (moment, id);
CREATE INDEX moment_comments_author_idx ON moment_comments (author);

-- A friendship is stored in both directions: (a, b) and (b, a).
CREATE TABLE friendships (
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  friend     text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (principal, friend),
  CHECK (principal <> friend)
);
CREATE INDEX friendships_friend_idx ON friendships (friend);

CREATE TABLE friend_requests (
  id           bigint PRIMARY KEY,
  from_id      text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  to_id        text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  status       text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'withdrawn')),
  created_at   timestamptz NOT NULL,
  responded_at timestamptz,
  CHECK (from_id <> to_id)
);
-- At most one pending request per direction.
CREATE UNIQUE INDEX friend_requests_pending_uq ON friend_requests (from_id, to_id) WHERE status = 'pending';
CREATE INDEX friend_requests_to_idx ON friend_requests (to_id, id DESC);
CREATE INDEX friend_requests_from_idx ON friend_requests (from_id, id DESC);
