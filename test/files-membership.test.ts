// Files follow membership (issue 50): a principal reads a file it does not own only while a live message carrying it
// reaches it: one of a thread it is still a member of, not deleted, within retention. Leaving a group or being
// removed from it ends its access to the group's files unless another message (a direct one carrying the same
// file) still reaches it; deleting a message takes back only what no other message carries, in any thread.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("files follow membership and the messages that carry them", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-files-members-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { env: { FILES_DIR: dir } });
  const base = node.url;

  const upload = async (who: Registered): Promise<string> => {
    const r = await call(base, "POST", "/v1/files/upload?name=plan.bin", {
      token: who.token,
      body: randomBytes(1024) as unknown as string,
      headers: { "content-type": "application/octet-stream" },
    });
    if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const status = async (who: Registered, file: string) =>
    (await call(base, "GET", `/v1/files/${file}`, { token: who.token })).status;
  const group = async (owner: Registered, members: Registered[]): Promise<string> => {
    const r = await call(base, "POST", "/v1/groups", {
      token: owner.token,
      json: { name: "crew", members: members.map((m) => m.id) },
    });
    if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`);
    return r.body.group.id as string;
  };
  const toGroup = async (who: Registered, g: string, file: string): Promise<string> => {
    const r = await call(base, "POST", `/v1/groups/${g}/messages`, {
      token: who.token,
      json: { body: "see file", attachments: [file] },
    });
    if (r.status !== 201) throw new Error(`group send: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const direct = async (who: Registered, to: Registered, file: string): Promise<string> => {
    const r = await call(base, "POST", "/v1/messages", {
      token: who.token,
      json: { to: to.id, body: "see file", attachments: [file] },
    });
    if (r.status !== 201) throw new Error(`send: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const leave = (g: string, member: Registered, by: Registered) =>
    call(base, "DELETE", `/v1/groups/${g}/members/${member.id}`, { token: by.token }).then((r) => r.status);
  const remove = (who: Registered, message: string) =>
    call(base, "DELETE", `/v1/messages/${message}`, { token: who.token }).then((r) => r.status);

  t.test("the issue's scenario: B leaves, A removes C, A deletes the message", async (t) => {
    const [a, b, c, d] = await Promise.all(["A", "B", "C", "D"].map((n) => registerAgent(base, n)));
    const g = await group(a!, [b!, c!, d!]);
    const f = await upload(a!);
    const m = await toGroup(a!, g, f);
    for (const who of [b!, c!, d!]) t.equal(await status(who, f), 200, `${who.display_name} reads the group's file`);

    t.equal(await leave(g, b!, b!), 204, "B leaves");
    t.equal(await status(b!, f), 404, "B, gone, no longer reads it");
    t.equal(await status(c!, f), 200, "C still does");

    t.equal(await leave(g, c!, a!), 204, "A removes C");
    t.equal(await status(c!, f), 404, "C, removed, no longer reads it");
    t.equal(await status(d!, f), 200, "D, still a member, does");

    t.equal(await remove(a!, m), 204, "A deletes the message");
    for (const who of [b!, c!, d!]) t.equal(await status(who, f), 404, `${who.display_name}: 404`);
    t.equal(await status(a!, f), 200, "the owner keeps its file");
  });

  t.test("a direct message carrying the same file keeps it for one who left", async (t) => {
    const [a, b] = await Promise.all(["A", "B"].map((n) => registerAgent(base, n)));
    const g = await group(a!, [b!]);
    const f = await upload(a!);
    await toGroup(a!, g, f);
    const dm = await direct(a!, b!, f);
    t.equal(await leave(g, b!, b!), 204);
    t.equal(await status(b!, f), 200, "the direct message still reaches B");
    t.equal(await remove(a!, dm), 204);
    t.equal(await status(b!, f), 404, "with it deleted, nothing reaches B (the group's message is not B's any more)");
  });

  t.test("deleting a group message leaves a file a direct message still carries (low 8)", async (t) => {
    const [a, b, c] = await Promise.all(["A", "B", "C"].map((n) => registerAgent(base, n)));
    const g = await group(a!, [b!, c!]);
    const f = await upload(a!);
    const gm = await toGroup(a!, g, f);
    await direct(a!, b!, f);
    t.equal(await remove(a!, gm), 204, "A deletes the group's message");
    t.equal(await status(b!, f), 200, "B still reads it: the direct message carries it");
    t.equal(await status(c!, f), 404, "C, whom only the group's message reached, does not");
  });

  t.test("a delete takes back only what no other message carries", async (t) => {
    const [a, b] = await Promise.all(["A", "B"].map((n) => registerAgent(base, n)));
    const g = await group(a!, [b!]);
    const f = await upload(a!);
    const first = await toGroup(a!, g, f);
    const second = await toGroup(a!, g, f);
    t.equal(await remove(a!, first), 204);
    t.equal(await status(b!, f), 200, "the second message still carries it");
    t.equal(await remove(a!, second), 204);
    t.equal(await status(b!, f), 404, "no message carries it any more");
  });

  t.test("a member who joins later does not read files sent before it joined", async (t) => {
    const [a, b, late] = await Promise.all(["A", "B", "Late"].map((n) => registerAgent(base, n)));
    const g = await group(a!, [b!]);
    const f = await upload(a!);
    await toGroup(a!, g, f);
    const add = await call(base, "POST", `/v1/groups/${g}/members`, { token: a!.token, json: { members: [late!.id] } });
    t.equal(add.status, 200, add.text);
    t.equal(await status(late!, f), 404, "it was not sent to them");
    await toGroup(a!, g, f);
    t.equal(await status(late!, f), 200, "sent again, it is");
  });

  t.test("the access check reads by index", async (t) => {
    // with sequential scans priced out, a plan that still has one has no index to read by
    const plan = await node.svc.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(
        "explain (format json) select 1 from file_shares s join thread_members tm on tm.thread_id = s.thread_id and tm.principal = s.principal " +
          "where s.file_id = 1 and s.principal = 'x' and exists (select 1 from message_files mf where mf.file_id = s.file_id and mf.thread_id = s.thread_id and mf.message_id >= 0)",
      );
    });
    t.notMatch(JSON.stringify(plan), /Seq Scan/, "no sequential scan");
  });
});
