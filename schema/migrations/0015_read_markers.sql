-- Read markers (issue 36; docs/ARCHITECTURE.md, "Read markers"): how far each member has read each thread, and
-- whether a person tells the others so.

-- The newest message id the member has read in the thread (0: none). It only moves forward: marking an older
-- message read changes nothing. A thread's unread count is its messages from others above it (and above the
-- retention horizon).
ALTER TABLE thread_members ADD COLUMN read_through bigint NOT NULL DEFAULT 0;

-- Whether the other members of a thread hear that this principal read it (a `read` WebSocket event). Read for
-- people only: an agent always sends them. Off, the own marker still moves and the own other connections still hear
-- it (to clear their unread badges).
ALTER TABLE principals ADD COLUMN read_receipts boolean NOT NULL DEFAULT true;
