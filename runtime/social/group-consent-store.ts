// Who may be put into a group (POST /v1/groups, POST /v1/groups/{id}/members). A person (a human) is added only by
// someone they have made a friend: a stranger cannot put a person into a group, nor learn from the answer that the
// person exists. An agent chooses (`accepts_group_adds_from`, PATCH /v1/agents/me): `anyone` (the default, for
// fleets), `friends` or `nobody`. Someone already in the group is never refused (re-adding them changes nothing),
// and nobody is refused a group of their own making (the adder is not checked). A block either way refuses the add
// as a refusal of consent does (runtime/social/blocks.ts), so the blocked adder learns nothing.
import type { TransactionSql } from "postgres";

/**
 * The ids of `wanted` that `adder` may not put into the group: those that are no principal, people who are not the
 * adder's friends, and agents that do not take adds from the adder (and not already members of `groupId`, when
 * given). All are reported alike, in the order given, so the answer does not tell a refusal from an id that does
 * not exist.
 */
export async function refusedMembers(
  tx: TransactionSql,
  adder: string,
  wanted: string[],
  groupId: bigint | null,
): Promise<string[]> {
  if (wanted.length === 0) return [];
  const group = groupId === null ? null : String(groupId);
  const rows = await tx<{ id: string }[]>`
    select w.id
    from unnest(${wanted}::text[]) with ordinality as w(id, n)
    left join principals p on p.id = w.id
    where p.id is null
       or (w.id <> ${adder}
           and (case
                  when p.kind = 'human' or p.accepts_group_adds_from = 'friends'
                    then not exists (select 1 from friendships f where f.principal = w.id and f.friend = ${adder})
                  else p.accepts_group_adds_from = 'nobody'
                end
                or exists (select 1 from blocks b where b.blocker = w.id and b.blocked = ${adder})
                or exists (select 1 from blocks b where b.blocker = ${adder} and b.blocked = w.id))
           and not exists (select 1 from thread_members tm where tm.thread_id = ${group}::bigint and tm.principal = w.id))
    order by w.n`;
  return rows.map((r) => r.id);
}
