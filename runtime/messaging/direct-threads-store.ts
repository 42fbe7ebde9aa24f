// Postgres side of direct threads: the one thread of a pair, found by its key, or made on first contact when the
// recipient takes messages from the sender (runtime/messaging/hub.ts caches it per node).
import type { Sql } from "../db/client.ts";

/** The key of the one direct thread of a pair, whichever side starts it. */
export const pairKey = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/**
 * The direct thread of `me` and `to`, created on first use when `to` takes messages from `me`: an agent from anyone,
 * a person (human) from anyone or from friends only, as they chose (`accepts_messages_from`). A pair that already has
 * its thread may always write (the person wrote first, or they talked before). Null when `to` does not exist or does
 * not take messages from `me`: one statement answers both, doing the same work for both (the same probes, hit or
 * miss), so neither the answer nor its time tells a person who does not accept the message from no one.
 */
export async function directThread(sql: Sql, me: string, to: string, newId: bigint): Promise<bigint | null> {
  const pair = pairKey(me, to);
  const [row] = await sql<{ created: bigint | null; existing: bigint | null; found: boolean }[]>`
    with t as (select id from threads where pair_key = ${pair}),
    r as (
      select p.id from principals p
      where p.id = ${to}
        and (p.kind = 'agent' or p.accepts_messages_from = 'anyone' or exists (select 1 from t)
             or exists (select 1 from friendships f where f.principal = ${me} and f.friend = ${to}))
    ),
    ins as (
      insert into threads (id, kind, pair_key)
      select ${String(newId)}, 'direct', ${pair} from r
      on conflict (pair_key) do nothing
      returning id
    ),
    mem as (
      insert into thread_members (thread_id, principal)
      select ins.id, m.p from ins, (values (${me}::text), (${to}::text)) as m(p)
    )
    select (select id from ins) as created,
           (select id from t) as existing,
           exists (select 1 from r) as found`;
  if (!row?.found) return null;
  if (row.created !== null) return row.created;
  if (row.existing !== null) return row.existing;
  // created concurrently by a transaction our snapshot did not see
  const [again] = await sql<{ id: bigint }[]>`select id from threads where pair_key = ${pair}`;
  return again?.id ?? null;
}
