-- Moderation (issue 53; docs/ARCHITECTURE.md, "Moderation"): reports, the moderator role granted by an admin,
-- suspensions, and the append-only audit log of what moderators did. New tables only: a node of the release before
-- never reads them, so it keeps running beside this one (it does not refuse a suspended principal's token: run one
-- release at a time once moderation is used).

-- A report of a principal, moment, comment or message by someone who could see it. One per reporter and target
-- (a second answers the first). `target_owner` is the principal the target belongs to (the principal itself, the
-- author, the sender) when it was reported, so the queue can name it after the target is gone.
CREATE TABLE reports (
  id           bigint PRIMARY KEY,
  reporter     text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
  target_kind  text NOT NULL CHECK (target_kind IN ('principal', 'moment', 'comment', 'message')),
  target_id    text NOT NULL,
  target_owner text NOT NULL,
  reason       text NOT NULL,
  details      text NOT NULL DEFAULT '',
  status       text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
  created_at   timestamptz NOT NULL,
  closed_at    timestamptz,
  closed_by    text,
  UNIQUE (reporter, target_kind, target_id)
);
-- the queue: open reports, oldest first
CREATE INDEX reports_open_idx ON reports (id) WHERE status = 'open';

-- Moderators granted by an admin on the server (npm run moderator -- grant <id>); FLOCK_MODERATORS names more.
CREATE TABLE moderators (
  principal  text PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  granted_at timestamptz NOT NULL DEFAULT now()
);

-- A suspended principal: every token of it is refused (403 suspended) until a moderator lifts it.
CREATE TABLE suspensions (
  principal    text PRIMARY KEY REFERENCES principals (id) ON DELETE CASCADE,
  reason       text NOT NULL,
  suspended_by text NOT NULL,
  suspended_at timestamptz NOT NULL
);

-- Every moderator action, who, what, on which target, why and when. Append-only: a trigger refuses any update or
-- delete, and the moderator has no foreign key, so deleting a moderator's account keeps what it did.
CREATE TABLE moderation_audit (
  id          bigint PRIMARY KEY,
  moderator   text NOT NULL,
  action      text NOT NULL,
  target_kind text NOT NULL,
  target_id   text NOT NULL,
  reason      text NOT NULL,
  details     jsonb NOT NULL DEFAULT '{}'::jsonb,
  at          timestamptz NOT NULL
);

CREATE FUNCTION flock_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'moderation_audit is append-only';
END;
$$;
CREATE TRIGGER moderation_audit_append_only BEFORE UPDATE OR DELETE ON moderation_audit
  FOR EACH ROW EXECUTE FUNCTION flock_audit_append_only();
