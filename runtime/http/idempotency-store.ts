// The SQL of Idempotency-Key (runtime/http/idempotency.ts; migration 0012): claim a key, keep its answer, let it go.
import type { Sql } from "../db/client.ts";

/** What a key already claimed holds. */
export interface KeyRow {
  fingerprint: Buffer;
  owner: string;
  status: number | null;
  body: string | null;
  /** Seconds since it was claimed (or taken over). */
  running_s: number;
  /** Seconds since it was first claimed. */
  age_s: number;
}

/**
 * Claim `key` for a request: true when it was free (now ours), else what holds it. A key released between the insert
 * and the read (its request ended meanwhile) is claimed again; each round either inserts or reads a row unless that
 * same race repeats. `answer`: claimed with its answer kept at once (a send refused before it stored anything).
 */
export async function claimKey(
  sql: Sql,
  principal: string,
  key: string,
  fingerprint: Buffer,
  owner: string,
  answer?: { status: number; body: string },
): Promise<true | KeyRow> {
  for (;;) {
    const [row] = await sql<(KeyRow & { mine: boolean })[]>`
      with ins as (
        insert into idempotency_keys (principal, key, fingerprint, owner, status, body)
        values (${principal}, ${key}, ${fingerprint}, ${owner}, ${answer?.status ?? null}, ${answer?.body ?? null})
        on conflict do nothing returning true as mine
      )
      select true as mine, null::bytea as fingerprint, null as owner, null::int as status, null as body, 0::float8 as running_s, 0::float8 as age_s
        from ins
      union all
      select false, fingerprint, owner, status, body, extract(epoch from now() - started_at)::float8, extract(epoch from now() - created_at)::float8
        from idempotency_keys where principal = ${principal} and key = ${key} and not exists (select 1 from ins)`;
    if (row !== undefined) return row.mine ? true : row;
  }
}

/** Take over a key whose request is no longer running (its node died, or this node lost it): true when taken. */
export async function takeOver(
  sql: Sql,
  principal: string,
  key: string,
  from: string,
  owner: string,
  expired: boolean,
): Promise<boolean> {
  const rows = await sql`
    update idempotency_keys set owner = ${owner}, started_at = now()
      ${expired ? sql`, created_at = now(), status = null, body = null` : sql``}
    where principal = ${principal} and key = ${key} and owner = ${from} ${expired ? sql`` : sql`and status is null`}
    returning 1`;
  return rows.length === 1;
}

/** Keep the answer of a key's request. */
export async function keepAnswer(
  sql: Sql,
  principal: string,
  key: string,
  owner: string,
  status: number,
  body: string,
): Promise<void> {
  await sql`update idempotency_keys set status = ${status}, body = ${body}
    where principal = ${principal} and key = ${key} and owner = ${owner} and status is null`;
}

/** Let a key go (its request failed without a result to keep: a retry runs it again). */
export async function releaseKey(sql: Sql, principal: string, key: string, owner: string): Promise<void> {
  await sql`delete from idempotency_keys where principal = ${principal} and key = ${key} and owner = ${owner} and status is null`;
}

/**
 * Drop keys older than `seconds` (at most `limit`, skipping rows another node's sweep holds); how many went. Counted
 * by the statement, not returned row by row.
 */
export async function sweepKeys(sql: Sql, seconds: number, limit: number): Promise<number> {
  const done = await sql`
    delete from idempotency_keys where ctid = any(array(
      select ctid from idempotency_keys where created_at < now() - make_interval(secs => ${seconds})
      order by created_at limit ${limit} for update skip locked))`;
  return done.count;
}
