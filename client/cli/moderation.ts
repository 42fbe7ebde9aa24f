// Reporting, and the moderators' commands (`flockctl mod ...`: 404 for a token that is not a moderator's).
import { type Command, type Ctx, need, UsageError } from "./context.ts";
import { limitOf } from "./social.ts";

const TARGETS = ["principal", "moment", "comment", "message"] as const;
const REASONS = ["spam", "abuse", "harassment", "impersonation", "illegal", "other"] as const;

function reasonOf(ctx: Ctx, usage: string): string {
  if (ctx.flags.reason === undefined) throw new UsageError(`--reason is required: ${usage}`, false);
  return ctx.flags.reason;
}

const none = (lines: string[]) => lines.join("\n") || "(none)";

export const moderationCommands: Record<string, Command> = {
  report: {
    usage: `report <${TARGETS.join("|")}> <id> <${REASONS.join("|")}> [--details TEXT]`,
    flags: ["details"],
    async run(ctx) {
      const [target, id, reason] = need(ctx, ["target", "id", "reason"], "report <target> <id> <reason>");
      if (!TARGETS.includes(target as never)) throw new UsageError(`target must be one of ${TARGETS.join(", ")}`);
      if (!REASONS.includes(reason as never)) throw new UsageError(`reason must be one of ${REASONS.join(", ")}`);
      const r = await ctx.flock.report({
        target: target as (typeof TARGETS)[number],
        id: id!,
        reason: reason as (typeof REASONS)[number],
        details: ctx.flags.details,
      });
      ctx.print(r, () => `reported ${target} ${id}: ${r.report.id} (${r.report.status})`);
    },
  },
  "mod reports": {
    usage: "mod reports [--limit N] [--after REPORT_ID]      the open reports, oldest first",
    flags: ["limit", "after"],
    async run(ctx) {
      const page = await ctx.flock.reportQueue({ limit: limitOf(ctx), after: ctx.flags.after });
      ctx.print(page, () =>
        none([
          ...page.reports.map(
            (r) => `${r.id}  ${r.target} ${r.target_id} of ${r.target_owner}: ${r.reason} (by ${r.reporter})`,
          ),
          ...(page.has_more ? [`more: --after ${page.reports.at(-1)?.id}`] : []),
        ]),
      );
    },
  },
  "mod resolve": {
    usage: "mod resolve <report_id> --reason TEXT",
    flags: ["reason"],
    async run(ctx) {
      const [id] = need(ctx, ["report_id"], "mod resolve <report_id> --reason TEXT");
      const r = await ctx.flock.closeReport(id!, "resolved", reasonOf(ctx, "mod resolve <report_id> --reason TEXT"));
      ctx.print(r, () => `resolved ${id}`);
    },
  },
  "mod dismiss": {
    usage: "mod dismiss <report_id> --reason TEXT",
    flags: ["reason"],
    async run(ctx) {
      const [id] = need(ctx, ["report_id"], "mod dismiss <report_id> --reason TEXT");
      const r = await ctx.flock.closeReport(id!, "dismissed", reasonOf(ctx, "mod dismiss <report_id> --reason TEXT"));
      ctx.print(r, () => `dismissed ${id}`);
    },
  },
  "mod suspend": {
    usage: "mod suspend <id>... --reason TEXT [--remove-content]   tokens refused at once",
    flags: ["reason", "remove-content"],
    async run(ctx) {
      need(ctx, ["id"], "mod suspend <id>... --reason TEXT");
      const r = await ctx.flock.suspend({
        principals: ctx.args,
        reason: reasonOf(ctx, "mod suspend <id>... --reason TEXT"),
        remove_content: ctx.flags["remove-content"] === true,
      });
      ctx.print(r, () => {
        const gone = r.removed
          ? `; removed ${r.removed.moments} moments, ${r.removed.comments} comments, ${r.removed.messages} messages`
          : "";
        return `suspended ${r.principals.join(", ") || "(nobody)"}${gone}`;
      });
    },
  },
  "mod unsuspend": {
    usage: "mod unsuspend <id>... --reason TEXT",
    flags: ["reason"],
    async run(ctx) {
      need(ctx, ["id"], "mod unsuspend <id>... --reason TEXT");
      const r = await ctx.flock.unsuspend({
        principals: ctx.args,
        reason: reasonOf(ctx, "mod unsuspend <id>... --reason TEXT"),
      });
      ctx.print(r, () => `lifted ${r.principals.join(", ") || "(nobody)"}`);
    },
  },
  "mod remove": {
    usage: "mod remove <moment|comment|message> <id> --reason TEXT",
    flags: ["reason"],
    async run(ctx) {
      const [target, id] = need(ctx, ["target", "id"], "mod remove <target> <id> --reason TEXT");
      if (!["moment", "comment", "message"].includes(target!))
        throw new UsageError("target must be one of moment, comment, message");
      await ctx.flock.removeContent({
        target: target as "moment" | "comment" | "message",
        id: id!,
        reason: reasonOf(ctx, "mod remove <target> <id> --reason TEXT"),
      });
      ctx.print({ ok: true }, () => `removed ${target} ${id}`);
    },
  },
  "mod audit": {
    usage: "mod audit [--limit N] [--before AUDIT_ID]        what moderators did, newest first",
    flags: ["limit", "before"],
    async run(ctx) {
      const page = await ctx.flock.moderationAudit({ limit: limitOf(ctx), before: ctx.flags.before });
      ctx.print(page, () =>
        none([
          ...page.entries.map((e) => `${e.at}  ${e.moderator} ${e.action} ${e.target} ${e.target_id}: ${e.reason}`),
          ...(page.has_more ? [`more: --before ${page.entries.at(-1)?.id}`] : []),
        ]),
      );
    },
  },
};
