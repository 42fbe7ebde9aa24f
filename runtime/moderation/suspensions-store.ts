// Suspensions in Postgres (migration 0028): a suspended principal's tokens are all refused (the token lookup,
// runtime/tokens-store.ts principalOfToken, reads whether its principal is suspended; a suspension's change is
// broadcast as the tokens' forget).
import type { Sql } from "../db/client.ts";

/** Suspends `principal` (an existing one): false when there is no such principal; true also when it already was. */
export async function suspend(sql: Sql, principal: string, by: string, reason: string, at: Date): Promise<boolean> {
  const [row] = await sql<{ principal: string }[]>`
    insert into suspensions (principal, reason, suspended_by, suspended_at)
    select id, ${reason}, ${by}, ${at} from principals where id = ${principal}
    on conflict (principal) do update set principal = excluded.principal
    returning principal`;
  return row !== undefined;
}

/** Lifts the suspension of `principal`; whether it was suspended. */
export async function unsuspend(sql: Sql, principal: string): Promise<boolean> {
  const rows = await sql`delete from suspensions where principal = ${principal} returning principal`;
  return rows.length > 0;
}
