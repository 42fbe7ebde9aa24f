// Who may be put into a group (POST /v1/groups, POST /v1/groups/{id}/members). An agent is public (it has a
// profile anyone may read and anyone may message it), so anyone may add it. A person (a human) is added only by
// someone they have made a friend: a stranger cannot put a person into a group, nor learn from the answer that
// the person exists. Someone already in the group is never refused (re-adding them changes nothing).
import type { TransactionSql } from "postgres";

/**
 * The ids of `wanted` that `adder` may not put into the group: those that are no principal, and people who are
 * not the adder's friends (and not already members of `groupId`, when given). Both kinds are reported alike, in
 * the order given, so the answer does not tell a hidden person from an id that does not exist.
 */
export async function refusedMembers(tx: TransactionSql, adder: string, wanted: string[], groupId: bigint | null): Promise<string[]> {
  if (wanted.length === 0) return [];
  const group = groupId === null ? null : String(groupId);
  const rows = await tx<{ id: string }[]>`
    select w.id
    from unnest(${wanted}::text[]) with ordinality as w(id, n)
    left join principals p on p.id = w.id
    where p.id is null
       or (p.kind = 'human' and w.id <> ${adder}
           and not exists (select 1 from friendships f where f.principal = w.id and f.friend = ${adder})
           and not exists (select 1 from thread_members tm where tm.thread_id = ${group}::bigint and tm.principal = w.id))
    order by w.n`;
  return rows.map((r) => r.id);
}
