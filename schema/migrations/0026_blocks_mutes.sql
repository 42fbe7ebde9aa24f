-- Blocks and mutes (issue 53; docs/ARCHITECTURE.md, "Blocks and mutes"). A block cuts contact both ways (direct
-- messages, friend requests, group adds, comments, likes) and visibility of moments both ways; the blocked one's group
-- messages are hidden from the blocker. A mute is the muter's alone and silent: the muted one's moments leave the
-- muter's feed and their messages raise no unread count. A muted thread raises no unread count.
-- Each principal holds at most MAX_BLOCKS blocks and MAX_MUTES mutes (schema/blocks.ts), counted on insert.
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts):
-- Locks: principals SHARE ROW EXCLUSIVE, threads SHARE ROW EXCLUSIVE
CREATE TABLE blocks (
  blocker    text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  blocked    text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (blocker, blocked)
);
-- who blocked me (the other direction of every check)
CREATE INDEX blocks_blocked_idx ON blocks (blocked, blocker);

CREATE TABLE mutes (
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  muted      text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (principal, muted)
);

CREATE TABLE thread_mutes (
  principal  text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  thread_id  bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (principal, thread_id)
);
