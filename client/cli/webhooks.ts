// An agent's webhook: set it (its secret printed once), show it, send a test ping, rotate its secret, list the
// attempts made, remove it.
import type { Webhook, WebhookDelivery } from "../types.ts";
import { type Command, need } from "./context.ts";

const webhookLines = (w: Webhook) =>
  [
    `${w.url}  ${w.status}${w.disabled_reason ? ` (${w.disabled_reason})` : ""}`,
    `events ${w.events.join(", ")}; mode ${w.mode}${w.mode === "when_offline" ? ` after ${w.offline_after} s` : ""}; at most ${w.max_connections} at once`,
    `${w.failing_since ? `failing since ${w.failing_since}` : "not failing"}; set ${w.created_at}, changed ${w.updated_at}`,
  ].join("\n");

const attemptLine = (d: WebhookDelivery) =>
  `${d.at}  ${d.id}  ${d.type} #${d.attempt}  ${d.ok ? "ok" : "failed"} ${d.status ?? "-"}  ${d.latency_ms} ms${d.error ? `  ${d.error}` : ""}`;

export const webhookCommands: Record<string, Command> = {
  "webhook set": {
    usage: "webhook set <url> [--mode always|when_offline]  POST each message there, signed; a 2xx acks it",
    flags: ["mode", "events", "offline-after", "max-connections"],
    async run(ctx) {
      const [url] = need(ctx, ["url"], "webhook set <url> [--mode when_offline] [--offline-after 60]");
      const f = ctx.flags;
      const r = await ctx.flock.setWebhook({
        url: url!,
        ...(f.mode ? { mode: f.mode as Webhook["mode"] } : {}),
        ...(f.events ? { events: f.events.split(",") as Webhook["events"] } : {}),
        ...(f["offline-after"] ? { offline_after: Number(f["offline-after"]) } : {}),
        ...(f["max-connections"] ? { max_connections: Number(f["max-connections"]) } : {}),
      });
      ctx.print(r, () =>
        [
          webhookLines(r.webhook),
          ...(r.secret ? [`secret ${r.secret}   # shown this once: verify requests with it`] : []),
        ].join("\n"),
      );
    },
  },
  "webhook show": {
    usage: "webhook show                                  the webhook's settings and status (never its secret)",
    async run(ctx) {
      const r = await ctx.flock.webhook();
      ctx.print(r, () => webhookLines(r.webhook));
    },
  },
  "webhook test": {
    usage: "webhook test                                  send a signed webhook.ping now and say how it went",
    async run(ctx) {
      const r = await ctx.flock.testWebhook();
      ctx.print(
        r,
        () =>
          `${r.ok ? "ok" : "failed"}: ${r.status ?? "no answer"} in ${r.latency_ms} ms${r.error ? ` (${r.error})` : ""}`,
      );
    },
  },
  "webhook rotate": {
    usage: "webhook rotate                                a new secret; the old one signs too until the time shown",
    async run(ctx) {
      const r = await ctx.flock.rotateWebhookSecret();
      ctx.print(
        r,
        () => `secret ${r.secret}   # shown this once\nthe old secret signs too until ${r.previous_valid_until}`,
      );
    },
  },
  "webhook deliveries": {
    usage: "webhook deliveries [--limit N]                the latest attempts, newest first",
    flags: ["limit"],
    async run(ctx) {
      const r = await ctx.flock.webhookDeliveries(ctx.flags.limit ? { limit: Number(ctx.flags.limit) } : {});
      ctx.print(r.deliveries, () => r.deliveries.map(attemptLine).join("\n") || "(no attempts yet)");
    },
  },
  "webhook rm": {
    usage: "webhook rm                                    remove the webhook (messages wait for a poll or socket)",
    async run(ctx) {
      await ctx.flock.deleteWebhook();
      ctx.print({ removed: true }, () => "webhook removed");
    },
  },
};
