// Trust and safety in the app: whom I blocked and muted (the first hundred of each, loaded once a session and kept
// current by my own changes), whether I am a moderator (the report queue answers 200 rather than 404), and the
// controls: Block / Unblock, Mute / Unmute and Report on a person (a "More" menu beside the person, with "Blocked" or
// "Muted" shown), Report on a moment or a message (a reason picker, then "Send report"); and the lists of whom I blocked
// and muted (the Friends page), each with its menu.
import type { Author, CreateReportRequest, Flock } from "@flock/client";
import { FlockError } from "@flock/client";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Alert } from "./ui.tsx";

type Who = { id: string; display_name: string; avatar_url?: string | null };

export interface Safety {
  /** Whom I blocked and muted, by id. */
  blocked: ReadonlyMap<string, Who>;
  muted: ReadonlyMap<string, Who>;
  /** null until the report queue answered: true for a moderator. */
  moderator: boolean | null;
  block(who: Who, on: boolean): Promise<void>;
  mute(who: Who, on: boolean): Promise<void>;
}

type Relations = { principal: Author }[];
const LIST = 100;

const toggled = (s: ReadonlyMap<string, Who>, who: Who, on: boolean): ReadonlyMap<string, Who> => {
  const n = new Map(s);
  if (on) n.set(who.id, who);
  else n.delete(who.id);
  return n;
};

export function useSafety(client: Flock): Safety {
  const [blocked, setBlocked] = useState<ReadonlyMap<string, Who>>(new Map());
  const [muted, setMuted] = useState<ReadonlyMap<string, Who>>(new Map());
  const [moderator, setModerator] = useState<boolean | null>(null);
  useEffect(() => {
    const ids = (l: Relations) => new Map(l.map((r) => [r.principal.id, r.principal]));
    client.http.request<{ blocks: Relations }>("GET", "/v1/blocks", { query: { limit: LIST } }).then(
      (r) => setBlocked(ids(r.blocks)),
      () => {}, // shown as unblocked until the next load; acting still works
    );
    client.http.request<{ mutes: Relations }>("GET", "/v1/mutes", { query: { limit: LIST } }).then(
      (r) => setMuted(ids(r.mutes)),
      () => {},
    );
    client.reportQueue({ limit: 1 }).then(
      () => setModerator(true),
      (err) => setModerator(err instanceof FlockError && err.status === 404 ? false : null),
    );
  }, [client]);
  const block = useCallback(
    async (who: Who, on: boolean) => {
      await client.http.request<void>(on ? "POST" : "DELETE", `/v1/blocks/${encodeURIComponent(who.id)}`);
      setBlocked((s) => toggled(s, who, on));
    },
    [client],
  );
  const mute = useCallback(
    async (who: Who, on: boolean) => {
      await client.http.request<void>(on ? "POST" : "DELETE", `/v1/mutes/${encodeURIComponent(who.id)}`);
      setMuted((s) => toggled(s, who, on));
    },
    [client],
  );
  return { blocked, muted, moderator, block, mute };
}

/** Mutes or unmutes one conversation (its messages raise no unread count or notification). */
export function muteThread(client: Flock, id: string, on: boolean): Promise<void> {
  return client.http.request<void>(on ? "POST" : "DELETE", `/v1/threads/${encodeURIComponent(id)}/mute`);
}

export const REASONS: readonly [CreateReportRequest["reason"], string][] = [
  ["spam", "Spam"],
  ["abuse", "Abuse"],
  ["harassment", "Harassment"],
  ["impersonation", "Impersonation"],
  ["illegal", "Illegal content"],
  ["other", "Something else"],
];

/** A reason picker and "Send report" for one target; `onDone` closes it. */
function ReportForm(p: {
  target: CreateReportRequest["target"];
  id: string;
  what: string;
  onDone(sent: boolean): void;
}) {
  const { client, fail } = useApp();
  const [reason, setReason] = useState<CreateReportRequest["reason"]>("spam");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const field = `report-${p.target}-${p.id}`;
  const picker = useRef<HTMLSelectElement>(null);
  useEffect(() => picker.current?.focus(), []); // opened: the keyboard goes on from the reason
  return (
    <form
      class="report row"
      data-report-form={p.id}
      aria-label={`Report ${p.what}`}
      onKeyDown={(e) => e.key === "Escape" && p.onDone(false)}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        client.report({ target: p.target, id: p.id, reason }).then(
          () => p.onDone(true),
          (err) => {
            setBusy(false);
            setError(fail(err));
          },
        );
      }}
    >
      <label for={field}>Reason</label>
      <select
        id={field}
        ref={picker}
        value={reason}
        onChange={(e) => setReason(e.currentTarget.value as typeof reason)}
      >
        {REASONS.map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
      <button type="submit" class="primary" disabled={busy}>
        Send report
      </button>
      <button type="button" onClick={() => p.onDone(false)}>
        Cancel
      </button>
      <Alert text={error} onClose={() => setError(null)} />
    </form>
  );
}

/** "Report" on a moment, comment or message: opens the reason picker; "Reported" once sent. */
export function ReportButton(p: { target: "moment" | "comment" | "message"; id: string; className?: string }) {
  const [open, setOpen] = useState(false);
  const [sent, setSent] = useState(false);
  const what = `this ${p.target}`;
  if (sent)
    return (
      <span class="muted" role="status" data-reported={p.id}>
        Reported
      </span>
    );
  return (
    <>
      <button
        type="button"
        class={p.className ?? "link"}
        aria-expanded={open}
        aria-label={`Report ${what}`}
        onClick={() => setOpen((o) => !o)}
      >
        Report
      </button>
      {open && (
        <ReportForm
          target={p.target}
          id={p.id}
          what={what}
          onDone={(done) => {
            setOpen(false);
            setSent(done);
          }}
        />
      )}
    </>
  );
}

/**
 * What one may do about a person: "Blocked" / "Muted" when they are, and a "More" menu with Mute / Unmute,
 * Block / Unblock (a block asks first) and Report.
 */
export function PersonActions({ who, onChange }: { who: Who; onChange?(): void }) {
  const { safety, fail, session } = useApp();
  const [open, setOpen] = useState(false);
  const [reporting, setReporting] = useState(false);
  const [reported, setReported] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (who.id === session.me.id || !who.id) return null;
  const isBlocked = safety.blocked.has(who.id);
  const isMuted = safety.muted.has(who.id);
  const name = who.display_name || who.id;

  async function run(f: () => Promise<void>) {
    setError(null);
    try {
      await f();
      setOpen(false);
      onChange?.();
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <span class="person-actions" data-person-actions={who.id}>
      {isBlocked && (
        <span class="badge blocked" data-blocked={who.id}>
          Blocked
        </span>
      )}
      {isMuted && (
        <span class="badge muted-badge" data-muted={who.id}>
          Muted
        </span>
      )}
      {reported && (
        <span class="muted" role="status">
          Reported
        </span>
      )}
      <button
        type="button"
        class="link"
        aria-expanded={open}
        aria-label={`More for ${name}`}
        onClick={() => {
          setOpen((o) => !o);
          setReporting(false);
        }}
      >
        More
      </button>
      {open && (
        <span class="menu" role="group" aria-label={`Actions for ${name}`}>
          <button type="button" onClick={() => void run(() => safety.mute(who, !isMuted))}>
            {isMuted ? "Unmute" : "Mute"}
          </button>
          <button
            type="button"
            class={isBlocked ? undefined : "danger"}
            onClick={() => {
              if (
                !isBlocked &&
                !confirm(
                  `Block ${name}? They can no longer write to you or see your moments, and you see none of theirs.`,
                )
              )
                return;
              void run(() => safety.block(who, !isBlocked));
            }}
          >
            {isBlocked ? "Unblock" : "Block"}
          </button>
          {!reported && (
            <button type="button" aria-expanded={reporting} onClick={() => setReporting((r) => !r)}>
              Report
            </button>
          )}
        </span>
      )}
      {open && reporting && (
        <ReportForm
          target="principal"
          id={who.id}
          what={name}
          onDone={(sent) => {
            setReporting(false);
            if (!sent) return;
            setReported(true);
            setOpen(false);
          }}
        />
      )}
      <Alert text={error} onClose={() => setError(null)} />
    </span>
  );
}

/** Whom I blocked and whom I muted (the server leaves the blocked out of search, so they are found here). */
export function SafetyLists() {
  const { safety } = useApp();
  const lists = [
    ["Blocked", "blocked-h", [...safety.blocked.values()]],
    ["Muted", "muted-h", [...safety.muted.values()]],
  ] as const;
  return (
    <>
      {lists.map(([title, id, list]) =>
        list.length === 0 ? null : (
          <section key={id} aria-labelledby={id}>
            <h2 id={id}>{title}</h2>
            <ul class="list" aria-label={title}>
              {list.map((p) => (
                <li key={p.id} class="card" data-relation={p.id}>
                  <strong>{p.display_name}</strong> <PersonActions who={p} />
                </li>
              ))}
            </ul>
          </section>
        ),
      )}
    </>
  );
}
