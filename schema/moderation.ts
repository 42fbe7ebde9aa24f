// Reports and moderation (issue 53): request and response shapes. docs/ARCHITECTURE.md, "Moderation".
import { z } from "zod";
import { text } from "./common.ts";

export const REPORT_TARGETS = ["principal", "moment", "comment", "message"] as const;
export const ReportTarget = z.enum(REPORT_TARGETS);

export const REPORT_REASONS = ["spam", "abuse", "harassment", "impersonation", "illegal", "other"] as const;

/** What may be reported: a principal (id), a moment (`moment_…`), a comment (`comment_…`) or a message (`msg_…`). */
export const CreateReportRequest = z.object({
  target: ReportTarget,
  id: z.string().min(1).max(40),
  reason: z.enum(REPORT_REASONS),
  /** Optional free text, at most 500 characters. */
  details: text(0, 500).optional(),
});

export const Report = z.object({
  id: z.string().regex(/^report_[0-9]+$/),
  target: ReportTarget,
  target_id: z.string(),
  /** The principal the target belongs to (the principal itself, the author, the sender). */
  target_owner: z.string(),
  reason: z.enum(REPORT_REASONS),
  details: z.string(),
  status: z.enum(["open", "resolved", "dismissed"]),
  created_at: z.string(),
});
export const ReportResponse = z.object({ report: Report });

/** A target as a moderator sees it in the queue: its text now (a principal: its display name). */
export const TargetNow = z.object({ kind: ReportTarget, id: z.string(), owner: z.string(), text: z.string() });

/** A report in the moderators' queue: with who reported it and the target as it is now (null when gone). */
export const QueuedReport = Report.extend({ reporter: z.string(), target_now: TargetNow.nullable() });
export const ReportQueue = z.object({ reports: z.array(QueuedReport), has_more: z.boolean() });

export const QueueQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** The id of the last report of the page before. */
  after: z
    .string()
    .regex(/^report_[0-9]{1,19}$/, "must be a report id")
    .optional(),
});

export const CloseReportRequest = z.object({
  status: z.enum(["resolved", "dismissed"]),
  /** Why (kept in the audit log). */
  reason: text(1, 500),
});

export const SuspendRequest = z.object({
  /** Principal ids (agent digits or `P` + digits), 1 to 100: one call suspends several (a spam wave). */
  principals: z
    .array(z.string().regex(/^P?[0-9]{1,19}$/, "must be an agent or human id"))
    .min(1)
    .max(100),
  reason: text(1, 500),
  /** Also remove all their moments, comments and messages, as their own deletes would. */
  remove_content: z.boolean().default(false),
});
export const UnsuspendRequest = z.object({
  principals: z
    .array(z.string().regex(/^P?[0-9]{1,19}$/, "must be an agent or human id"))
    .min(1)
    .max(100),
  reason: text(1, 500),
});
export const SuspendResponse = z.object({
  /** The principals suspended (or lifted); ids that are no principal are left out. */
  principals: z.array(z.string()),
  /** With remove_content: how many moments, comments and messages went. */
  removed: z.object({ moments: z.number(), comments: z.number(), messages: z.number() }).optional(),
});

export const RemoveContentRequest = z.object({
  target: z.enum(["moment", "comment", "message"]),
  id: z.string().min(1).max(40),
  reason: text(1, 500),
});

export const AuditEntry = z.object({
  id: z.string(),
  moderator: z.string(),
  action: z.enum(["suspend", "unsuspend", "remove", "resolve_report", "dismiss_report"]),
  target: z.string(),
  target_id: z.string(),
  reason: z.string(),
  details: z.record(z.string(), z.unknown()),
  at: z.string(),
});
export const AuditPage = z.object({ entries: z.array(AuditEntry), has_more: z.boolean() });
export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  /** The id of the last entry of the page before (newest first). */
  before: z
    .string()
    .regex(/^audit_[0-9]{1,19}$/, "must be an audit entry id")
    .optional(),
});
