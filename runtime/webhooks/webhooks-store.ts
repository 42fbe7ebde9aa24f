// Agents' webhook endpoints and the attempts made to them, in Postgres (migration 0029): the truth a node's
// deliveries and the API read. One statement each.
import type { Sql } from "../db/client.ts";
import type { Webhook, WebhookEventType, WebhookMode } from "../../schema/webhooks.ts";

export interface WebhookRow {
  agent: string;
  url: string;
  events: WebhookEventType[];
  mode: WebhookMode;
  offline_after: number;
  max_connections: number;
  secret: string;
  previous_secret: string | null;
  previous_valid_until: Date | null;
  status: "active" | "disabled";
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookSettings {
  url: string;
  events: WebhookEventType[];
  mode: WebhookMode;
  offline_after: number;
  max_connections: number;
}

export const toWebhook = (r: WebhookRow): Webhook => ({
  url: r.url,
  events: r.events,
  mode: r.mode,
  offline_after: r.offline_after,
  max_connections: r.max_connections,
  status: r.status,
  disabled_reason: r.disabled_reason,
  failing_since: r.failing_since?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** The secrets that sign now: the current one, and the one before while its grace runs. */
export function liveSecrets(r: Pick<WebhookRow, "secret" | "previous_secret" | "previous_valid_until">, now: number) {
  return r.previous_secret !== null && r.previous_valid_until !== null && r.previous_valid_until.getTime() > now
    ? [r.secret, r.previous_secret]
    : [r.secret];
}

/**
 * Set the agent's endpoint: made with `secret`, or replaced (its secret kept, re-enabled, its run of failures
 * forgotten). `created`: whether it was made (the secret is then shown).
 */
export async function putWebhook(
  sql: Sql,
  agent: string,
  s: WebhookSettings,
  secret: string,
  now: Date,
): Promise<{ row: WebhookRow; created: boolean }> {
  const [r] = await sql<(WebhookRow & { created: boolean })[]>`
    insert into webhooks (agent, url, events, mode, offline_after, max_connections, secret, created_at, updated_at)
    values (${agent}, ${s.url}, ${s.events}::text[], ${s.mode}, ${s.offline_after}, ${s.max_connections}, ${secret},
            ${now}, ${now})
    on conflict (agent) do update set url = excluded.url, events = excluded.events, mode = excluded.mode,
      offline_after = excluded.offline_after, max_connections = excluded.max_connections, status = 'active',
      disabled_reason = null, failing_since = null, updated_at = excluded.updated_at
    returning *, (xmax = 0) as created`;
  const { created, ...row } = r!;
  return { row, created };
}

export async function getWebhook(sql: Sql, agent: string): Promise<WebhookRow | null> {
  const [r] = await sql<WebhookRow[]>`select * from webhooks where agent = ${agent}`;
  return r ?? null;
}

/** Whether there was one to remove. */
export async function deleteWebhook(sql: Sql, agent: string): Promise<boolean> {
  const r = await sql`delete from webhooks where agent = ${agent}`;
  return r.count > 0;
}

/** A new secret; the one before signs until `until`. Null when the agent has no endpoint. */
export async function rotateSecret(sql: Sql, agent: string, secret: string, until: Date): Promise<WebhookRow | null> {
  const [r] = await sql<WebhookRow[]>`
    update webhooks set previous_secret = secret, previous_valid_until = ${until}, secret = ${secret},
      updated_at = now()
    where agent = ${agent} returning *`;
  return r ?? null;
}

/** Every agent whose endpoint is active (the sweep, and a node's start). */
export async function activeAgents(sql: Sql): Promise<string[]> {
  const rows = await sql<{ agent: string }[]>`select agent from webhooks where status = 'active'`;
  return rows.map((r) => r.agent);
}

/** A failure at `at`: when the run of failures began (this one, unless one was running). */
export async function markFailing(sql: Sql, agent: string, at: Date): Promise<Date | null> {
  const [r] = await sql<{ failing_since: Date }[]>`
    update webhooks set failing_since = coalesce(failing_since, ${at}) where agent = ${agent} and status = 'active'
    returning failing_since`;
  return r?.failing_since ?? null;
}

export async function clearFailing(sql: Sql, agent: string): Promise<void> {
  await sql`update webhooks set failing_since = null where agent = ${agent} and failing_since is not null`;
}

/** Disable the agent's endpoint (it stays, shown with the reason, until set again). Whether it was active. */
export async function disableWebhook(sql: Sql, agent: string, reason: string, at: Date): Promise<boolean> {
  const r = await sql`
    update webhooks set status = 'disabled', disabled_reason = ${reason}, updated_at = ${at}
    where agent = ${agent} and status = 'active'`;
  return r.count > 0;
}

export interface AttemptRecord {
  id: string;
  type: string;
  attempt: number;
  status: number | null;
  ok: boolean;
  error: string | null;
  latency_ms: number;
  at: Date;
}

/**
 * Record attempts (in the order given), keeping the newest `keep` of the agent's: the older are trimmed in the same
 * statement. A delivery pass writes its attempts in one statement at its end.
 */
export async function recordAttempts(sql: Sql, agent: string, as: AttemptRecord[], keep: number): Promise<void> {
  if (as.length === 0) return;
  const rows = as.map((a) => ({ agent, ...a }));
  await sql`
    with added as (
      insert into webhook_deliveries
        ${sql(rows, "agent", "id", "type", "attempt", "status", "ok", "error", "latency_ms", "at")}
      returning seq
    )
    delete from webhook_deliveries where agent = ${agent} and seq <= (
      select seq from (
        select seq from webhook_deliveries where agent = ${agent} union all select seq from added
      ) s order by seq desc offset ${keep} limit 1)`;
}

/** The agent's newest attempts, newest first. */
export async function listAttempts(sql: Sql, agent: string, limit: number): Promise<AttemptRecord[]> {
  return sql<AttemptRecord[]>`
    select id, type, attempt, status, ok, error, latency_ms, at from webhook_deliveries
    where agent = ${agent} order by seq desc limit ${limit}`;
}
