-- Read receipts turned back on do not reveal what was read while they were off (issue 50, low 10; docs/ARCHITECTURE.md,
-- "Read markers"). The others see `shown_through`, the marker as it stood when it last moved with receipts on: NULL
-- while it follows read_through (every move was told), a message id frozen at the first move made with receipts
-- off. A move with receipts on again sets it back to NULL (that read is told, and it covers what lies before it).
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts):
-- Locks: thread_members ACCESS EXCLUSIVE, principals ACCESS SHARE, passkey_challenges SHARE
ALTER TABLE thread_members ADD COLUMN shown_through bigint;

-- Where receipts are off now, what moved while they were off is not known: nothing is shown of them, until their
-- marker moves with receipts on.
UPDATE thread_members tm SET shown_through = 0
  FROM principals p WHERE p.id = tm.principal AND NOT p.read_receipts;

-- A signed-in person adding a passkey holds one challenge at a time: a new one replaces theirs (issue 50, low 6).
CREATE INDEX passkey_challenges_principal_idx ON passkey_challenges (principal) WHERE NOT new_user;
