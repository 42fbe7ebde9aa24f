// Migration 0024 gives what serves every stream its stream name (group_cursors -> stream_cursors, group_acks ->
// stream_acks, flock_group_ack -> flock_stream_ack) while a node of the release before keeps running beside the new
// ones during a rolling upgrade: a database at 0023 with cursors and acks above them, out of order, migrated to 0024,
// keeps every row in the new tables; the release before's statements, written as 0.1.0 (commit abd85bb) runs them,
// still work through the old names (a view of each table, a function calling the new one) and land in the new tables;
// and the new function answers every ack as the old one did.
import t, { type Test } from "tap";
import type { Sql } from "../runtime/db/client.ts";
import { migrate, readMigrations } from "../runtime/db/migrate.ts";
import { emptySchema } from "./helpers/node.ts";

const all = readMigrations();
const before = all.filter((m) => m.name < "0024");
/** delivered_seq while a socket takes the stream live (runtime/messaging/stream-store.ts LIVE). */
const LIVE = "9223372036854775807";

/** A cursor row as the tests compare them. */
type Cursor = [member: string, thread: string, acked: string, joined: string, delivered: string, expired: string];

/**
 * A database at 0023, as 0.1.0 leaves it: principals 1-4; 2 and 3 in group 77 (numbered to 7); 2's inbox numbered to
 * 4, acknowledged through 1 with 3 and 4 acked above it; in the group, 2 joined at 2, acked through 3 with 5 above,
 * and 3 acked through 2.
 */
async function at0023(t: Test): Promise<{ sql: Sql; schema: string }> {
  const { sql, schema } = await emptySchema(t);
  await migrate(sql, schema, before);
  await sql`
    insert into principals (id, kind, display_name)
    values ('1', 'agent', 'a'), ('2', 'agent', 'b'), ('3', 'agent', 'c'), ('4', 'agent', 'd')`;
  await sql`insert into threads (id, kind) values (77, 'group')`;
  await sql`insert into groups (id, name, owner, last_seq) values (77, 'g', '1', 7)`;
  await sql`insert into thread_members (thread_id, principal) values (77, '1'), (77, '2'), (77, '3')`;
  await sql`insert into inboxes (principal, last_seq) values ('2', 4)`;
  await sql`
    insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq, expired)
    values ('2', 0, 1, 0, 4, 0), ('2', 77, 3, 2, 6, 1), ('3', 77, 2, 0, 2, 0)`;
  await sql`insert into group_acks (member, thread_id, seq) values ('2', 0, 3), ('2', 0, 4), ('2', 77, 5)`;
  return { sql, schema };
}

const SEEDED: Cursor[] = [
  ["2", "0", "1", "0", "4", "0"],
  ["2", "77", "3", "2", "6", "1"],
  ["3", "77", "2", "0", "2", "0"],
];

async function cursors(sql: Sql, table: "stream_cursors" | "group_cursors"): Promise<Cursor[]> {
  const rows = await sql<{ r: Cursor }[]>`
    select array[member, thread_id::text, acked_seq::text, joined_seq::text, delivered_seq::text, expired::text] as r
    from ${sql(table)} order by member, thread_id`;
  return rows.map((x) => x.r);
}

async function acks(sql: Sql, table: "stream_acks" | "group_acks"): Promise<string[]> {
  const rows = await sql<{ a: string }[]>`
    select member || ' ' || thread_id || ' ' || seq as a from ${sql(table)} order by member, thread_id, seq`;
  return rows.map((x) => x.a);
}

/** Migrate to the end: 0024 and whatever follows it. */
async function upgrade(t: Test, sql: Sql, schema: string): Promise<void> {
  t.same(
    await migrate(sql, schema, all),
    all.filter((m) => m.name >= "0024").map((m) => m.name),
    "0024 applied (and what follows it)",
  );
}

t.test("a database at 0023 migrated to 0024: every cursor and ack is in the new tables", async (t) => {
  const { sql, schema } = await at0023(t);
  await upgrade(t, sql, schema);
  t.same(await cursors(sql, "stream_cursors"), SEEDED, "the cursors, in stream_cursors");
  t.same(await acks(sql, "stream_acks"), ["2 0 3", "2 0 4", "2 77 5"], "the acks above them, in stream_acks");
  const kinds = await sql<{ relname: string; relkind: string }[]>`
    select c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname in ('stream_cursors', 'stream_acks', 'group_cursors', 'group_acks')
    order by c.relname`;
  t.same(
    kinds.map((k) => `${k.relname} ${k.relkind}`),
    ["group_acks v", "group_cursors v", "stream_acks r", "stream_cursors r"],
    "the new names are the tables, the old ones views",
  );
  t.same(await cursors(sql, "group_cursors"), SEEDED, "the old name reads the same rows");
  t.same(await acks(sql, "group_acks"), ["2 0 3", "2 0 4", "2 77 5"]);
  const indexes = await sql<{ indexname: string }[]>`
    select indexname from pg_indexes where schemaname = ${schema} and tablename in ('stream_cursors', 'stream_acks')
    order by indexname`;
  t.same(
    indexes.map((i) => i.indexname),
    ["stream_acks_pkey", "stream_cursors_pkey", "stream_cursors_thread_idx"],
    "the keys and the index carry the new names",
  );
});

t.test("the release before's statements work through the old names and land in the new tables", async (t) => {
  const { sql, schema } = await at0023(t);
  await upgrade(t, sql, schema);

  // a direct message to a new inbox (0.1.0's insertDirectBatch: the inbox row raised, its cursor made when new)
  const direct = (to: string) => sql`
    with raised as (
      insert into inboxes as i (principal, last_seq) values (${to}, 1)
      on conflict (principal) do update set last_seq = i.last_seq + excluded.last_seq
      returning principal as recipient, last_seq, xmax = 0 as made
    ),
    cursors as (
      insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
      select recipient, 0, 0, 0, 0 from raised where made
      on conflict do nothing
    )
    select last_seq::int as seq from raised`;
  t.same(await direct("4"), [{ seq: 1 }], "a first message to 4");
  t.same(await direct("2"), [{ seq: 5 }], "another to 2, whose inbox has a cursor");
  await sql`
    insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq) values ('2', 0, 0, 0, 0)
    on conflict do nothing`;
  // the paid path numbers through flock_inbox_take (0.1.0's payments store)
  t.same(await sql`select flock_inbox_take('1', 1)::int as seq`, [{ seq: 1 }], "a paid message to 1's new inbox");

  // sockets start taking streams live, then one stops at 6 (0.1.0's markLive)
  const markLive = (items: { member: string; thread: bigint; seq: number | null }[]) => sql`
    with v as (
      select * from unnest(${items.map((i) => i.member)}::text[], ${items.map((i) => String(i.thread))}::bigint[],
        ${items.map((i) => (i.seq === null ? null : String(i.seq)))}::bigint[]) as v(member, thread_id, seq)
    ),
    made as (
      insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
      select v.member, 0, 0, 0, ${LIVE}::bigint from v where v.thread_id = 0 and v.seq is null
      on conflict do nothing
    )
    update group_cursors gc set delivered_seq = case when v.seq is null then ${LIVE}::bigint
      when gc.delivered_seq = ${LIVE}::bigint then greatest(v.seq, gc.acked_seq) else greatest(gc.delivered_seq, v.seq) end
    from v where gc.member = v.member and gc.thread_id = v.thread_id`;
  await markLive([
    { member: "3", thread: 0n, seq: null },
    { member: "3", thread: 77n, seq: null },
  ]);
  await markLive([{ member: "3", thread: 77n, seq: 6 }]);

  // 1 and 3 join the group again (0.1.0's joinGroup): 3 is a member already and keeps its cursor
  const joined = await sql<{ member: string; acked_seq: string }[]>`
    insert into group_cursors (member, thread_id, acked_seq, joined_seq, delivered_seq)
    select m.p, g.id, g.last_seq, g.last_seq, g.last_seq
    from (select id, last_seq from groups where id = 77 for update) g, unnest(${["1", "3"]}::text[]) as m(p)
    on conflict do nothing
    returning member, acked_seq`;
  t.same(
    joined.map((j) => [j.member, j.acked_seq]),
    [["1", "7"]],
    "the one who joined gets a cursor at the group's newest",
  );

  // acks (0.1.0's ackBatch: the set-based update for a lone ack, flock_group_ack for the rest)
  const up = await sql<{ n: number }[]>`
    update group_cursors gc set acked_seq = solo.seq
    from (values ('3', 77::bigint, 3::bigint, 1, 0)) as solo(recipient, stream, seq, n, through)
    where gc.member = solo.recipient and gc.thread_id = solo.stream and gc.joined_seq < solo.seq
      and gc.acked_seq < solo.seq and (solo.through = 1 or gc.acked_seq = solo.seq - 1)
      and not exists (select 1 from group_acks a where a.member = gc.member and a.thread_id = gc.thread_id)
    returning solo.n`;
  t.same(up, [{ n: 1 }], "3's ack of the group's 3 moves its cursor in one update");
  const ack = async (member: string, thread: number, seq: number, through: boolean) =>
    (
      await sql<{ acked: string }[]>`select flock_group_ack(${member}, ${thread}, ${seq}, ${through})::text as acked`
    )[0]!.acked;
  t.equal(await ack("2", 0, 2, false), "4", "2's inbox cursor takes 2, then the 3 and 4 acked above it");
  t.equal(await ack("2", 77, 7, false), "3", "7 waits above 2's group cursor");
  t.equal(await ack("4", 0, 1, true), "1");

  // the retention pass moves cursors over what went (0.1.0's partitions store), and a read takes the count
  await sql`
    update group_cursors gc set expired = gc.expired + v.lost
    from (values ('3', 0::bigint, 2::bigint)) as v(member, thread_id, lost)
    where gc.member = v.member and gc.thread_id = v.thread_id`;
  const locked = await sql.begin(
    (tx) => tx<{ member: string }[]>`
      select gc.member from group_cursors gc where gc.expired > 0 order by gc.member, gc.thread_id for update of gc`,
  );
  t.same(
    locked.map((r) => r.member),
    ["2", "3"],
    "a read's lock on the cursors with an expired count",
  );

  // 2 leaves the group (0.1.0's leaveGroup)
  await sql`delete from group_cursors where member = '2' and thread_id = 77`;
  await sql`delete from group_acks where member = '2' and thread_id = 77`;

  t.same(
    await cursors(sql, "stream_cursors"),
    [
      ["1", "0", "0", "0", "0", "0"],
      ["1", "77", "7", "7", "7", "0"],
      ["2", "0", "4", "0", "4", "0"],
      ["3", "0", "0", "0", LIVE, "2"],
      ["3", "77", "3", "0", "6", "0"],
      ["4", "0", "1", "0", "0", "0"],
    ],
    "every write landed in stream_cursors",
  );
  t.same(await acks(sql, "stream_acks"), [], "and in stream_acks: the acks taken in, the leaver's gone");
});

t.test("flock_stream_ack answers every ack as flock_group_ack did", async (t) => {
  // the same acks on three copies of the database: at 0023 through the old function, at 0024 through the new one and
  // through the old name
  const old = await at0023(t);
  const renamed = await at0023(t);
  await upgrade(t, renamed.sql, renamed.schema);
  const wrapped = await at0023(t);
  await upgrade(t, wrapped.sql, wrapped.schema);
  const script: [member: string, thread: number, seq: number, through: boolean][] = [
    ["2", 0, 3, false], // acked above already
    ["2", 0, 2, false], // the cursor takes 2, 3 and 4
    ["2", 0, 4, false], // at or below the cursor
    ["2", 77, 2, false], // before 2 joined
    ["2", 77, 5, false], // acked above already
    ["2", 77, 6, true], // cumulative: through 6, 5 taken in
    ["3", 77, 9, true],
    ["9", 0, 1, false], // no cursor
    ["3", 77, 11, false], // above the cursor
    ["3", 77, 10, false], // the cursor takes 10 and 11
    ["3", 77, 10, true], // again
  ];
  const run = async (sql: Sql, fn: "flock_group_ack" | "flock_stream_ack") => {
    const out: string[] = [];
    for (const [member, thread, seq, through] of script) {
      const [r] = await sql<
        { acked: string }[]
      >`select ${sql(fn)}(${member}, ${thread}, ${seq}, ${through})::text as acked`;
      out.push(r!.acked);
    }
    return out;
  };
  const answers = await run(old.sql, "flock_group_ack");
  t.same(answers, ["1", "4", "4", "-1", "3", "6", "9", "-1", "9", "11", "11"], "0023's answers");
  t.same(await run(renamed.sql, "flock_stream_ack"), answers, "flock_stream_ack answers the same");
  t.same(await run(wrapped.sql, "flock_group_ack"), answers, "and so does the old name at 0024");
  const after = await cursors(old.sql, "group_cursors");
  const above = await acks(old.sql, "group_acks");
  for (const db of [renamed, wrapped]) {
    t.same(await cursors(db.sql, "stream_cursors"), after, "the cursors end where 0023's did");
    t.same(await acks(db.sql, "stream_acks"), above, "and the acks above them");
  }
});
