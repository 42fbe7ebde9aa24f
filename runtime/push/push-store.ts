// Postgres side of Web Push (docs/ARCHITECTURE.md, "Web Push"; migration 0030): people's push subscriptions and the
// VAPID key pair the nodes share when the configuration gives none.
import type { Sql } from "../db/client.ts";

export interface SubscriptionRow {
  principal: string;
  endpoint: string;
  p256dh: string;
  auth: string;
}

export type AddOutcome =
  /** Kept (new, or the same endpoint again: its keys replaced); `previous` held it before when another person did. */
  | { kind: "kept"; created_at: Date; previous: string | null }
  /** The person holds `max` subscriptions already. */
  | { kind: "full" };

/**
 * Keeps `principal`'s subscription at `endpoint` (an endpoint is one browser's: another person's subscription of it
 * moves here), unless the person holds `max` others already. One statement.
 */
export async function addSubscription(sql: Sql, s: SubscriptionRow, max: number): Promise<AddOutcome> {
  const rows = await sql<{ created_at: Date; previous: string | null }[]>`
    with prev as (select principal from push_subscriptions where endpoint = ${s.endpoint}),
    kept as (
      insert into push_subscriptions (endpoint, principal, p256dh, auth)
      select ${s.endpoint}, ${s.principal}, ${s.p256dh}, ${s.auth}
      where (select count(*) from push_subscriptions where principal = ${s.principal} and endpoint <> ${s.endpoint}) < ${max}
      on conflict (endpoint) do update
        set principal = excluded.principal, p256dh = excluded.p256dh, auth = excluded.auth, created_at = now()
      returning created_at
    )
    select kept.created_at, (select principal from prev where principal <> ${s.principal}) as previous from kept`;
  const row = rows[0];
  return row ? { kind: "kept", created_at: row.created_at, previous: row.previous } : { kind: "full" };
}

/** Removes `principal`'s subscription at `endpoint`; whether there was one. */
export async function removeSubscription(sql: Sql, principal: string, endpoint: string): Promise<boolean> {
  const rows =
    await sql`delete from push_subscriptions where principal = ${principal} and endpoint = ${endpoint} returning 1`;
  return rows.length > 0;
}

/** Whether `principal` holds any subscription. */
export async function hasSubscriptions(sql: Sql, principal: string): Promise<boolean> {
  const rows = await sql`select 1 from push_subscriptions where principal = ${principal} limit 1`;
  return rows.length > 0;
}

/** Every principal that holds a subscription (what a node's cache starts from). */
export async function subscribers(sql: Sql): Promise<string[]> {
  const rows = await sql<{ principal: string }[]>`select distinct principal from push_subscriptions`;
  return rows.map((r) => r.principal);
}

/** The subscriptions of `principals`. */
export async function subscriptionsOf(sql: Sql, principals: readonly string[]): Promise<SubscriptionRow[]> {
  if (principals.length === 0) return [];
  return sql<SubscriptionRow[]>`
    select principal, endpoint, p256dh, auth from push_subscriptions where principal in ${sql(principals as string[])}`;
}

/** The subscriptions of the members of group `thread` but `except` (its sender), each with the group's name. */
export async function groupSubscriptions(
  sql: Sql,
  thread: bigint,
  except: string,
): Promise<(SubscriptionRow & { group_name: string })[]> {
  return sql<(SubscriptionRow & { group_name: string })[]>`
    select s.principal, s.endpoint, s.p256dh, s.auth, g.name as group_name
    from thread_members m
    join push_subscriptions s on s.principal = m.principal
    join groups g on g.id = m.thread_id
    where m.thread_id = ${String(thread)}::bigint and m.principal <> ${except}`;
}

/** Forgets a subscription the push service said is gone (404, 410); whether its person holds any left. */
export async function dropEndpoint(sql: Sql, principal: string, endpoint: string): Promise<boolean> {
  const [row] = await sql<{ left: boolean }[]>`
    with gone as (delete from push_subscriptions where endpoint = ${endpoint} and principal = ${principal})
    select exists (select 1 from push_subscriptions where principal = ${principal} and endpoint <> ${endpoint}) as left`;
  return row?.left ?? false;
}

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** The shared key pair: `made` is kept unless a pair is kept already (another node's, made first); the pair kept. */
export async function keepVapidKeys(sql: Sql, made: VapidKeys): Promise<VapidKeys> {
  await sql`
    insert into push_vapid_keys (id, public_key, private_key) values (1, ${made.publicKey}, ${made.privateKey})
    on conflict (id) do nothing`;
  const [row] = await sql<{ public_key: string; private_key: string }[]>`
    select public_key, private_key from push_vapid_keys where id = 1`;
  if (!row) throw new Error("push_vapid_keys holds no key pair after keeping one");
  return { publicKey: row.public_key, privateKey: row.private_key };
}

/** The shared key pair, or null when none was made yet. */
export async function readVapidKeys(sql: Sql): Promise<VapidKeys | null> {
  const [row] = await sql<{ public_key: string; private_key: string }[]>`
    select public_key, private_key from push_vapid_keys where id = 1`;
  return row ? { publicKey: row.public_key, privateKey: row.private_key } : null;
}
