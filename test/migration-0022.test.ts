// Upgrading to files that follow their messages (migration 0022), on Postgres and on the embedded PGlite: the shares
// given before are kept only where their principal is still a member of a thread with a kept message carrying the
// file; a share that outlived its group (left, removed) or its messages (deleted) goes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { connectSql, type Sql } from "../runtime/db/client.ts";
import { startEmbeddedPostgres } from "../runtime/db/embedded.ts";
import { migrate, readMigrations } from "../runtime/db/migrate.ts";
import { visibleFile } from "../runtime/files/records-store.ts";
import { emptySchema } from "./helpers/node.ts";

const SHA = "a".repeat(64);
const att = (id: number) => JSON.stringify([{ id: `file_${id}`, name: "f", content_type: "text/plain", size: 1 }]);

async function upgrade(t: Test, sql: Sql, schema: string) {
  const schemaOf = schema;
  const all = readMigrations();
  await migrate(
    sql,
    schema,
    all.filter((m) => m.name < "0022"),
  );
  // A (1) sent file 50 to B (2) directly, and file 51 to the group 20 of A, B and C (3); C left since; file 52 went
  // to the group in a message A deleted. As the code before 0022 shared them: one row per file and recipient.
  await sql`insert into principals (id, kind, display_name) values ('1', 'agent', 'a'), ('2', 'agent', 'b'), ('3', 'agent', 'c')`;
  await sql`insert into threads (id, kind, pair_key) values (10, 'direct', '1:2'), (20, 'group', null)`;
  await sql`insert into groups (id, name, owner) values (20, 'g', '1')`;
  await sql`insert into thread_members (thread_id, principal) values (10, '1'), (10, '2'), (20, '1'), (20, '2')`;
  await sql`
    insert into files (id, owner, name, content_type, size, sha256, created_at)
    values (50, '1', 'f', 'text/plain', 1, ${SHA}, now()), (51, '1', 'f', 'text/plain', 1, ${SHA}, now()), (52, '1', 'f', 'text/plain', 1, ${SHA}, now())`;
  await sql`
    insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, deleted_at)
    values (100, 10, '1', '2', 'dm', now(), ${att(50)}::text::jsonb, null),
           (200, 20, '1', null, 'group', now(), ${att(51)}::text::jsonb, null),
           (201, 20, '1', null, 'deleted', now(), ${att(52)}::text::jsonb, now())`;
  await sql`insert into file_shares (file_id, principal) values (50, '2'), (51, '2'), (51, '3'), (52, '2'), (52, '3')`;

  t.same(
    await migrate(
      sql,
      schema,
      all.filter((m) => m.name < "0023"),
    ),
    ["0022_files_follow_messages.sql"],
  );
  const carried = await sql`select file_id::int, thread_id::int, message_id::int from message_files order by 1`;
  t.same(
    carried,
    [
      { file_id: 50, thread_id: 10, message_id: 100 },
      { file_id: 51, thread_id: 20, message_id: 200 },
    ],
    "the kept messages' files (not the deleted one's)",
  );
  const shares = await sql`select file_id::int, principal, thread_id::int from file_shares order by 1, 2`;
  t.same(
    shares,
    [
      { file_id: 50, principal: "2", thread_id: 10 },
      { file_id: 51, principal: "2", thread_id: 20 },
    ],
    "B keeps what kept messages of its threads carry; C, gone from the group, and the deleted message's shares go",
  );
  const reads = async (file: bigint, who: string) => (await visibleFile(sql, file, who, 0n)) !== null;
  t.equal(await reads(50n, "2"), true);
  t.equal(await reads(51n, "2"), true);
  t.equal(await reads(51n, "3"), false, "C no longer reads the group's file");
  t.equal(await reads(52n, "2"), false, "nor B the deleted message's");
  t.equal(await reads(52n, "1"), true, "the owner reads its own");

  // then a node of 0.1.0, still running, sends file 53 to B directly and 54 to the group, as its statement did: the
  // message with its attachments, and shares of (file, principal) with no thread
  await sql`
    insert into files (id, owner, name, content_type, size, sha256, created_at)
    values (53, '1', 'f', 'text/plain', 1, ${SHA}, now()), (54, '1', 'f', 'text/plain', 1, ${SHA}, now())`;
  await sql`
    with m as (
      insert into messages (id, thread_id, sender, recipient, body, created_at, attachments)
      values (300, 10, '1', '2', 'dm from 0.1.0', now(), ${att(53)}::text::jsonb), (301, 20, '1', null, 'group from 0.1.0', now(), ${att(54)}::text::jsonb)
      returning id
    ), s as (
      insert into file_shares (file_id, principal) values (53, '2'), (54, '2') on conflict do nothing
    )
    select count(*) from m`;
  t.equal(await reads(53n, "2"), true, "B reads the file 0.1.0 sent it directly");
  t.equal(await reads(54n, "2"), true, "and the one it sent to the group");
  t.equal(await reads(54n, "3"), false, "C, gone from the group, does not");
  t.same(
    await sql`select file_id::int, principal, thread_id::int from file_shares where file_id >= 53 order by 1, 2`,
    [
      { file_id: 53, principal: "2", thread_id: 10 },
      { file_id: 54, principal: "2", thread_id: 20 },
    ],
    "shares in their threads",
  );
  // and a send of this release, which writes its own rows, is left as it wrote them (here D (4), in the group, was
  // given no share: the trigger would have given it one)
  await sql`insert into principals (id, kind, display_name) values ('4', 'agent', 'd')`;
  await sql`insert into thread_members (thread_id, principal) values (20, '4')`;
  await sql`insert into files (id, owner, name, content_type, size, sha256, created_at) values (55, '1', 'f', 'text/plain', 1, ${SHA}, now())`;
  await sql`
    with m as (
      insert into messages (id, thread_id, sender, recipient, body, created_at, attachments)
      values (302, 20, '1', null, 'group', now(), ${att(55)}::text::jsonb) returning id, thread_id
    ), mf as (insert into message_files (file_id, thread_id, message_id) values (55, 20, 302))
    insert into file_shares (file_id, principal, thread_id) values (55, '2', 20)`;
  t.equal(
    Number((await sql`select count(*)::int as n from file_shares where file_id = 55`)[0]!["n"]),
    1,
    "no share for D: the trigger left this release's send alone",
  );
  t.equal(Number((await sql`select count(*)::int as n from message_files where file_id = 55`)[0]!["n"]), 1);

  // 0.1.0 deletes the direct message carrying 53 (its statement only marks the row): the file goes with it
  await sql`update messages set deleted_at = now(), body = '' where id = 300`;
  t.equal(await reads(53n, "2"), false, "a message deleted by 0.1.0 no longer carries its file");
  // a deleted message's row moved between partitions (the maintainer inserts it again) gives nothing back
  await sql`insert into files (id, owner, name, content_type, size, sha256, created_at) values (56, '1', 'f', 'text/plain', 1, ${SHA}, now())`;
  await sql`insert into messages (id, thread_id, sender, recipient, body, created_at, attachments, deleted_at)
            values (303, 10, '1', '2', '', now(), ${att(56)}::text::jsonb, now())`;
  t.equal(
    Number((await sql`select count(*)::int as n from message_files where file_id = 56`)[0]!["n"]),
    0,
    "a deleted row carries nothing",
  );
  t.equal(await reads(56n, "2"), false);
  // 0.1.0 removes B from the group (its statement only deletes the membership): B's shares there go with it
  await sql`delete from thread_members where thread_id = 20 and principal = '2'`;
  t.equal(await reads(54n, "2"), false, "a member removed by 0.1.0 no longer reads the group's files");
  t.equal(
    Number((await sql`select count(*)::int as n from file_shares where thread_id = 20 and principal = '2'`)[0]!["n"]),
    0,
  );
  // the triggers find their tables from a session whose search_path is elsewhere (psql, tools)
  await sql.begin(async (tx) => {
    await tx.unsafe("set local search_path to pg_catalog");
    await tx.unsafe(
      `insert into "${schemaOf}".files (id, owner, name, content_type, size, sha256, created_at) values (57, '1', 'f', 'text/plain', 1, '${SHA}', now())`,
    );
    await tx.unsafe(
      `insert into "${schemaOf}".messages (id, thread_id, sender, recipient, body, created_at, attachments) values (304, 10, '1', '2', 'x', now(), '${att(57)}'::jsonb)`,
    );
  });
  t.equal(await reads(57n, "2"), true, "a send from a session with another search_path is shared too");
}

t.test("migration 0022 on Postgres", async (t) => {
  const { sql, schema } = await emptySchema(t);
  await upgrade(t, sql, schema);
});

t.test("migration 0022 on the embedded PGlite", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-mig-0022-"));
  const pg = await startEmbeddedPostgres(dir);
  const sql = await connectSql({ url: pg.url, schema: "public", pool: 1 });
  t.teardown(async () => {
    await sql.end({ timeout: 1 });
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await upgrade(t, sql, "public");
});
