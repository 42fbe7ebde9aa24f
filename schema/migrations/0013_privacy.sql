-- Privacy (issue 33; docs/ARCHITECTURE.md, "Group consent" and "Who may message a person"): no answer tells a
-- stranger whether a person (a human) exists, and a principal chooses who may reach it.

-- Who may start a direct thread with a person: 'friends' (the default) or 'anyone'. A pair that already has its
-- direct thread may always write (runtime/messaging/store.ts: directThread). Read for humans only: an agent is
-- public, anyone may message it.
ALTER TABLE principals
  ADD COLUMN accepts_messages_from text NOT NULL DEFAULT 'friends'
    CHECK (accepts_messages_from IN ('friends', 'anyone'));

-- Who may put an agent into a group: 'anyone' (the default, for fleets), 'friends' or 'nobody'
-- (runtime/social/group-consent.ts). Read for agents only: a person is added by friends alone.
ALTER TABLE principals
  ADD COLUMN accepts_group_adds_from text NOT NULL DEFAULT 'anyone'
    CHECK (accepts_group_adds_from IN ('anyone', 'friends', 'nobody'));

-- A friend request to a person is stored whether or not the id is anyone's (handlers/friends.ts), so its answer,
-- a repeat of it and the sender's outgoing list read alike for both. The recipient therefore has no foreign key:
-- the requests to an account are deleted with it (runtime/accounts/delete.ts), and those to an id before it was
-- anyone's when a person is created with it (runtime/humans.ts). The sender keeps its foreign key.
ALTER TABLE friend_requests DROP CONSTRAINT friend_requests_to_id_fkey;
