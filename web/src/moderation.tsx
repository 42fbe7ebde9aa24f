// The moderator page (#/moderation; its link shows only for a moderator): the open reports, oldest first, each with
// what was reported as it is now, who reported it and why; Resolve or Dismiss it, Suspend the reported principal (or
// the reported content's owner; optionally removing all their content) or Remove the reported content, each with a
// reason the audit log keeps; lifting a suspension by id; and the audit log, newest first. For anyone else the page
// shows only that there is nothing here (the moderation API answers them 404).
import type { AuditEntry, QueuedReport } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Name } from "./names.tsx";
import { REASONS } from "./safety.tsx";
import { Alert, When } from "./ui.tsx";

const reasonText = (r: string) => REASONS.find(([v]) => v === r)?.[1] ?? r;

const ACTIONS: Record<AuditEntry["action"], string> = {
  suspend: "Suspended",
  unsuspend: "Lifted the suspension of",
  remove: "Removed",
  resolve_report: "Resolved a report on",
  dismiss_report: "Dismissed a report on",
};

export function Moderation() {
  const { safety } = useApp();
  if (safety.moderator === null) return <p role="status">Loading…</p>;
  if (!safety.moderator)
    return (
      <section class="page" aria-labelledby="mod-h">
        <h1 id="mod-h">Not found</h1>
        <p class="muted">There is no such page.</p>
      </section>
    );
  return <Queue />;
}

function Queue() {
  const { client, fail } = useApp();
  const [reports, setReports] = useState<QueuedReport[] | null>(null);
  const [audit, setAudit] = useState<AuditEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  const [lift, setLift] = useState({ id: "", reason: "" });

  async function load() {
    try {
      const [q, a] = await Promise.all([client.reportQueue({ limit: 50 }), client.moderationAudit({ limit: 50 })]);
      setReports(q.reports);
      setAudit(a.entries);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void load(), []);

  async function act(f: () => Promise<unknown>, done: string) {
    setError(null);
    setInfo(null);
    try {
      await f();
      setInfo(done);
    } catch (err) {
      setError(fail(err));
    }
    await load();
  }

  return (
    <section class="page moderation" aria-labelledby="mod-h">
      <h1 id="mod-h">Moderation</h1>
      <Alert text={error} onClose={() => setError(null)} />
      {info && <p role="status">{info}</p>}
      <h2>Open reports</h2>
      {reports === null ? (
        <p role="status">Loading…</p>
      ) : reports.length === 0 ? (
        <p class="muted">No open reports.</p>
      ) : (
        <ul class="list" aria-label="Reports">
          {reports.map((r) => (
            <ReportItem key={r.id} r={r} act={act} />
          ))}
        </ul>
      )}
      <h2>Lift a suspension</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const id = lift.id.trim();
          if (!id || !lift.reason.trim()) return;
          void act(() => client.unsuspend({ principals: [id], reason: lift.reason.trim() }), "Suspension lifted.").then(
            () => setLift({ id: "", reason: "" }),
          );
        }}
      >
        <label for="lift-id">Principal id</label>
        <input id="lift-id" value={lift.id} onInput={(e) => setLift({ ...lift, id: e.currentTarget.value })} />
        <label for="lift-reason">Reason</label>
        <input
          id="lift-reason"
          value={lift.reason}
          maxLength={500}
          onInput={(e) => setLift({ ...lift, reason: e.currentTarget.value })}
        />
        <button type="submit" disabled={!lift.id.trim() || !lift.reason.trim()}>
          Lift suspension
        </button>
      </form>
      <h2>Audit log</h2>
      {audit === null ? (
        <p role="status">Loading…</p>
      ) : audit.length === 0 ? (
        <p class="muted">Nothing done yet.</p>
      ) : (
        <ol class="list audit" aria-label="Audit log">
          {audit.map((a) => (
            <li key={a.id} class="card" data-audit={a.action} data-target={a.target_id}>
              <When iso={a.at} /> · <Name id={a.moderator} /> · {ACTIONS[a.action] ?? a.action} {a.target}{" "}
              {a.target === "principal" ? <Name id={a.target_id} /> : <code>{a.target_id}</code>}
              <span class="muted"> — {a.reason}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function ReportItem({ r, act }: { r: QueuedReport; act(f: () => Promise<unknown>, done: string): Promise<void> }) {
  const { client, session } = useApp();
  const [note, setNote] = useState("");
  const [removeAll, setRemoveAll] = useState(false);
  const why = note.trim() || `report: ${r.reason}`;
  const owner = r.target_owner;
  const field = `note-${r.id}`;
  return (
    <li class="card report-item" data-report={r.id} data-target={r.target_id}>
      <div>
        <strong>{r.target}</strong>{" "}
        {r.target_now ? <q data-target-text>{r.target_now.text}</q> : <em class="muted">gone</em>} by{" "}
        <Name id={owner} />
      </div>
      <div class="muted">
        Reported by <Name id={r.reporter} /> for <strong>{reasonText(r.reason)}</strong>
        {r.details && <>: {r.details}</>} · <When iso={r.created_at} />
      </div>
      <div class="row">
        <label for={field}>Reason for the action</label>
        <input
          id={field}
          value={note}
          maxLength={500}
          placeholder={`report: ${r.reason}`}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
      </div>
      <div class="actions">
        <button type="button" onClick={() => void act(() => client.closeReport(r.id, "resolved", why), "Resolved.")}>
          Resolve
        </button>
        <button type="button" onClick={() => void act(() => client.closeReport(r.id, "dismissed", why), "Dismissed.")}>
          Dismiss
        </button>
        {r.target !== "principal" && r.target_now && (
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (!confirm(`Remove this ${r.target}? It is gone for everyone, as if its author deleted it.`)) return;
              void act(
                () => client.removeContent({ target: r.target as "moment", id: r.target_id, reason: why }),
                "Removed.",
              );
            }}
          >
            Remove {r.target}
          </button>
        )}
        {owner !== session.me.id && (
          <>
            <label class="check">
              <input type="checkbox" checked={removeAll} onChange={(e) => setRemoveAll(e.currentTarget.checked)} /> and
              remove all their content
            </label>
            <button
              type="button"
              class="danger"
              onClick={() => {
                if (!confirm("Suspend this account? Its tokens are refused at once, everywhere.")) return;
                void act(
                  () => client.suspend({ principals: [owner], reason: why, remove_content: removeAll }),
                  "Suspended.",
                );
              }}
            >
              Suspend owner
            </button>
          </>
        )}
      </div>
    </li>
  );
}
