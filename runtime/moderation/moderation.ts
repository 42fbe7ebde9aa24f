// Reports and moderation (issue 53; docs/ARCHITECTURE.md, "Moderation"): the use cases handlers/reports.ts and
// handlers/moderation.ts call. A moderator is an ordinary principal named by FLOCK_MODERATORS or granted by an admin
// on the server (runtime/moderation/admin.ts); the API never grants the role. Every action a moderator takes is
// appended to the audit log in the statement order: the change, then its entry.
//
// Removing content is its author's own delete, run for the author: a moment through runtime/social/moments.ts (gone
// from the feeds and the record cache), a message through runtime/messaging/message-changes.ts (a tombstone in
// history, out of search, quotes and files), a comment with its moment's count lowered as the account deletion does.
import { z } from "zod";
import type { Principal } from "../auth.ts";
import { ApiError, notFound } from "../errors.ts";
import { idTime, type IdKind, parseId } from "../ids.ts";
import type { Logger } from "../log.ts";
import { deleteOwnMessage } from "../messaging/message-changes.ts";
import type { Services } from "../services.ts";
import { recordCounts } from "../social/feed.ts";
import { deleteMoment } from "../social/moments.ts";
import type { CreateReportRequest, REPORT_REASONS } from "../../schema/moderation.ts";
import {
  appendAudit,
  auditPage,
  closeReport,
  deleteComment,
  deleteCommentsBy,
  isGrantedModerator,
  messageSender,
  messagesOf,
  momentAuthor,
  momentsOf,
  openReports,
  type ReportRow,
  resolveReportsOf,
  saveReport,
  type TargetKind,
  targetText,
  visibleOwner,
} from "./moderation-store.ts";
import { suspend, unsuspend } from "./suspensions-store.ts";

const KIND_OF: Record<TargetKind, IdKind> = {
  principal: "agent",
  moment: "moment",
  comment: "comment",
  message: "message",
};

/** The raw id of a target given as the API writes it; null when it cannot be one. */
function targetId(kind: TargetKind, id: string): bigint | string | null {
  if (kind === "principal") return /^P?[0-9]{1,19}$/.test(id) ? id : null;
  return parseId(KIND_OF[kind], id);
}

/** Whether `p` is a moderator (FLOCK_MODERATORS, or granted by an admin). */
export async function isModerator(svc: Services, p: Principal): Promise<boolean> {
  return svc.config.FLOCK_MODERATORS.includes(p.id) || (await isGrantedModerator(svc.sql, p.id));
}

/** 404 unless `p` is a moderator: the moderation routes do not exist for anyone else. */
export async function requireModerator(p: Principal, svc: Services): Promise<void> {
  if (!(await isModerator(svc, p))) throw notFound("route");
}

export const reportJson = (r: ReportRow) => ({
  id: `report_${r.id}`,
  target: r.target_kind,
  target_id: r.target_id,
  target_owner: r.target_owner,
  reason: r.reason as (typeof REPORT_REASONS)[number],
  details: r.details,
  status: r.status,
  created_at: r.created_at.toISOString(),
});

/** `me` reports a target it can see (404 otherwise): the report and whether it is new (one per reporter and target). */
export async function fileReport(
  svc: Services,
  me: Principal,
  body: z.infer<typeof CreateReportRequest>,
): Promise<{ report: ReturnType<typeof reportJson>; created: boolean }> {
  const raw = targetId(body.target, body.id);
  if (raw === null) throw notFound(body.target);
  const owner = await visibleOwner(svc.sql, me.id, body.target, raw, {
    moments: svc.horizons.moments(),
    messages: svc.horizons.messages(),
  });
  if (owner === undefined) throw notFound(body.target);
  const id = svc.ids.nextRaw();
  const { report, created } = await saveReport(svc.sql, {
    id,
    reporter: me.id,
    target_kind: body.target,
    target_id: body.id,
    target_owner: owner,
    reason: body.reason,
    details: body.details ?? "",
    created_at: new Date(idTime(id)),
  });
  return { report: reportJson(report), created };
}

/** The queue: open reports oldest first, each with its reporter and its target as a moderator sees it now. */
export async function reportQueue(svc: Services, after: bigint, limit: number) {
  const rows = await openReports(svc.sql, after, limit);
  const page = rows.slice(0, limit);
  const reports = await Promise.all(
    page.map(async (r) => ({ ...reportJson(r), reporter: r.reporter, target_now: await targetNow(svc, r) })),
  );
  return { reports, has_more: rows.length > limit };
}

/** A target as it is now (for the queue): its kind, id, owner and text (a principal's name); null once it is gone. */
async function targetNow(svc: Services, r: ReportRow): Promise<unknown> {
  const raw = targetId(r.target_kind, r.target_id);
  const text = raw === null ? undefined : await targetText(svc.sql, r.target_kind, raw);
  return text === undefined ? null : { kind: r.target_kind, id: r.target_id, owner: r.target_owner, text };
}

interface Audit {
  moderator: string;
  action: "suspend" | "unsuspend" | "remove" | "resolve_report" | "dismiss_report";
  target_kind: string;
  target_id: string;
  reason: string;
  details?: Record<string, unknown>;
}

async function audit(svc: Services, a: Audit): Promise<void> {
  const id = svc.ids.nextRaw();
  await appendAudit(svc.sql, { ...a, details: a.details ?? {}, id, at: new Date(idTime(id)) });
}

/** A moderator resolves or dismisses an open report (404 for no open one). */
export async function closeOne(
  svc: Services,
  mod: Principal,
  id: string,
  status: "resolved" | "dismissed",
  reason: string,
) {
  const raw = parseId("report", id);
  const row = raw === null ? undefined : await closeReport(svc.sql, raw, status, mod.id, new Date(svc.now()));
  if (!row) throw notFound("report");
  await audit(svc, {
    moderator: mod.id,
    action: status === "resolved" ? "resolve_report" : "dismiss_report",
    target_kind: "report",
    target_id: id,
    reason,
    details: { target: row.target_kind, target_id: row.target_id },
  });
  return reportJson(row);
}

/**
 * Suspends principals: from the commit on, their tokens are refused on every node (the forget broadcast drops them
 * from each node's cache; its listeners close their sockets with 4403 and end their long polls), and the open
 * reports of what they own are resolved. With `removeContent`, all their moments, comments and messages go too.
 */
export async function suspendMany(
  svc: Services,
  log: Logger,
  mod: Principal,
  ids: string[],
  reason: string,
  removeContent: boolean,
) {
  const done: string[] = [];
  const removed = { moments: 0, comments: 0, messages: 0 };
  for (const id of [...new Set(ids)]) {
    if (id === mod.id)
      throw new ApiError("invalid_request", "a moderator cannot suspend itself", { field: "principals" });
    if (!(await suspend(svc.sql, id, mod.id, reason, new Date(svc.now())))) continue;
    await svc.auth.forget(id);
    done.push(id);
    const gone = removeContent ? await removeAllOf(svc, log, id) : undefined;
    if (gone) {
      removed.moments += gone.moments;
      removed.comments += gone.comments;
      removed.messages += gone.messages;
    }
    const reports = await resolveReportsOf(svc.sql, id, mod.id, new Date(svc.now()));
    await audit(svc, {
      moderator: mod.id,
      action: "suspend",
      target_kind: "principal",
      target_id: id,
      reason,
      details: { remove_content: removeContent, reports_resolved: reports, ...(gone ? { removed: gone } : {}) },
    });
  }
  return removeContent ? { principals: done, removed } : { principals: done };
}

export async function unsuspendMany(svc: Services, mod: Principal, ids: string[], reason: string) {
  const done: string[] = [];
  for (const id of [...new Set(ids)]) {
    if (!(await unsuspend(svc.sql, id))) continue;
    await svc.auth.forget(id);
    done.push(id);
    await audit(svc, { moderator: mod.id, action: "unsuspend", target_kind: "principal", target_id: id, reason });
  }
  return { principals: done };
}

/** How many of a principal's moments or messages one pass removes (it loops until none are left). */
const REMOVE_BATCH = 500;

/** Removes everything `id` wrote, each as its own delete would: moments, comments, then messages. */
async function removeAllOf(svc: Services, log: Logger, id: string) {
  const gone = { moments: 0, comments: 0, messages: 0 };
  for (let batch = await momentsOf(svc.sql, id, REMOVE_BATCH); batch.length > 0;) {
    for (const m of batch) {
      await deleteMoment(svc, log, id, m).catch(() => {}); // gone meanwhile: nothing to do
      gone.moments++;
    }
    batch = await momentsOf(svc.sql, id, REMOVE_BATCH);
  }
  const counts = await deleteCommentsBy(svc.sql, id);
  gone.comments = counts.reduce((n, c) => n + c.n, 0);
  await recordCounts(
    svc,
    log,
    counts.map(({ n: _n, ...c }) => c),
  );
  const tried = new Set<bigint>();
  for (let batch = await messagesOf(svc.sql, id, REMOVE_BATCH); batch.some((m) => !tried.has(m));) {
    for (const m of batch) {
      if (tried.has(m)) continue;
      tried.add(m);
      try {
        await deleteOwnMessage(svc, log, m, id);
        gone.messages++;
      } catch (err) {
        // a message of a group its sender has left: it stays (its own delete could not reach it either)
        log.warn({ err, message: String(m), principal: id }, "a suspended principal's message could not be removed");
      }
    }
    batch = await messagesOf(svc.sql, id, REMOVE_BATCH);
  }
  return gone;
}

/** A moderator removes one moment, comment or message, as its author's delete would (404 when there is none). */
export async function removeContent(
  svc: Services,
  log: Logger,
  mod: Principal,
  kind: "moment" | "comment" | "message",
  id: string,
  reason: string,
): Promise<void> {
  const raw = parseId(kind, id);
  if (raw === null) throw notFound(kind);
  let owner: string | undefined;
  if (kind === "moment") {
    owner = await momentAuthor(svc.sql, raw);
    if (owner === undefined) throw notFound(kind);
    await deleteMoment(svc, log, owner, raw);
  } else if (kind === "comment") {
    const counts = await deleteComment(svc.sql, raw);
    if (!counts) throw notFound(kind);
    await recordCounts(svc, log, [counts]);
  } else {
    owner = await messageSender(svc.sql, raw);
    if (owner === undefined) throw notFound(kind);
    await deleteOwnMessage(svc, log, raw, owner);
  }
  await audit(svc, {
    moderator: mod.id,
    action: "remove",
    target_kind: kind,
    target_id: id,
    reason,
    details: owner ? { owner } : {},
  });
}

/** The audit log, newest first. */
export async function readAudit(svc: Services, before: bigint, limit: number) {
  const rows = await auditPage(svc.sql, before, limit);
  return {
    entries: rows.slice(0, limit).map((a) => ({
      id: `audit_${a.id}`,
      moderator: a.moderator,
      action: a.action,
      target: a.target_kind,
      target_id: a.target_id,
      reason: a.reason,
      details: a.details,
      at: a.at.toISOString(),
    })),
    has_more: rows.length > limit,
  };
}
