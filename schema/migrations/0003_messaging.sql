-- Messaging: threads (direct and group), their members, groups, messages and per-recipient deliveries.
-- Ids are the numeric part of the snowflake id (the API adds `thread_`, `group_`, `msg_`).
-- A group IS a thread of kind 'group': the group's id and its thread's id are the same number, and the
-- group's members are the thread's members (thread_members), so there is one membership table.
-- `deliveries` is the durable truth of what each recipient has not acknowledged yet: the Redis mailboxes
-- are rebuilt from it (unacked rows, oldest first) whenever they are missing.
CREATE TABLE threads (
  id              bigint PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('direct', 'group')),
  -- direct threads: the two member ids sorted and joined with ':' (one direct thread per pair); null for groups
  pair_key        text UNIQUE,
  -- no "last activity" column: a send never updates the thread row (no hot row, no lock between concurrent
  -- sends); the threads list finds each thread's newest message through messages_thread_id_idx
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'direct') = (pair_key IS NOT NULL))
);

CREATE TABLE thread_members (
  thread_id bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  principal text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, principal)
);
-- The caller's threads.
CREATE INDEX thread_members_principal_idx ON thread_members (principal, thread_id);

CREATE TABLE groups (
  id         bigint PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
  name       text NOT NULL,
  -- null once the owner's account is gone: any member may then manage the group
  owner      text REFERENCES principals (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE messages (
  id         bigint PRIMARY KEY,
  thread_id  bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
  sender     text NOT NULL,            -- no foreign key: messages stay with their recipients after the sender is deleted
  recipient  text,                     -- direct messages: the addressee; null for group messages
  body       text NOT NULL,
  created_at timestamptz NOT NULL
);
-- Thread history, newest first.
CREATE INDEX messages_thread_id_idx ON messages (thread_id, id DESC);

CREATE TABLE deliveries (
  recipient      text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  message_id     bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  -- times handed out, written back from the mailboxes in batches (may lag the live count by a moment)
  delivery_count integer NOT NULL DEFAULT 0,
  acked_at       timestamptz,
  PRIMARY KEY (recipient, message_id)
);
-- Rebuilding a mailbox: a recipient's unacknowledged deliveries, oldest first.
CREATE INDEX deliveries_unacked_idx ON deliveries (recipient, message_id) WHERE acked_at IS NULL;
