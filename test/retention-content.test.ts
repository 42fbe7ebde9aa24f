// What goes with a message past retention (issue 50, lows 1-3): the files it carried (404 unless a live message
// still carries them), the quotes of it that replies keep (shown as gone, as a deleted message's are), and the body a
// replay of its send with the same Idempotency-Key would answer. The node's clock is moved by hand.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { createLogger } from "../runtime/log.ts";
import { RetentionMaintainer } from "../runtime/retention/maintainer.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const MIN = 60_000;

async function setup(t: Parameters<typeof startTestNode>[0]) {
  let clock = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "flock-retention-content-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { now: () => clock, env: { FLOCK_RETENTION_MESSAGES: "10m", FILES_DIR: dir } });
  const maintainer = new RetentionMaintainer(node.svc.sql, node.svc.horizons, () => clock, createLogger("silent"));
  const a = await registerAgent(node.url, "writer");
  const b = await registerAgent(node.url, "reader");
  const send = async (
    from: Registered,
    to: Registered,
    json: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) => {
    const r = await call(node.url, "POST", "/v1/messages", {
      token: from.token,
      json: { to: to.id, ...json },
      headers,
    });
    if (r.status !== 201) throw new Error(`send: ${r.status} ${r.text}`);
    return r;
  };
  const upload = async (who: Registered): Promise<string> => {
    const r = await call(node.url, "POST", "/v1/files/upload?name=a.bin", {
      token: who.token,
      body: randomBytes(512) as unknown as string,
      headers: { "content-type": "application/octet-stream" },
    });
    if (r.status !== 201) throw new Error(`upload: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const file = async (who: Registered, id: string) =>
    (await call(node.url, "GET", `/v1/files/${id}`, { token: who.token })).status;
  return { node, maintainer, a, b, send, upload, file, move: (ms: number) => (clock += ms) };
}

t.test("an expired message's files answer 404, unless a live message still carries them (low 2)", async (t) => {
  const { node, maintainer, a, b, send, upload, file, move } = await setup(t);
  const f = await upload(a);
  const g = await upload(a);
  await send(a, b, { body: "both", attachments: [f, g] });
  t.equal(await file(b, f), 200);
  move(6 * MIN);
  await send(a, b, { body: "again", attachments: [g] });
  move(5 * MIN);
  // the first message is 11 minutes old: past the 10-minute horizon, before any pass has run
  t.equal(await file(b, f), 404, "the file only the expired message carried is gone for the recipient");
  t.equal(await file(b, g), 200, "the one a live message carries stays");
  t.equal(await file(a, f), 200, "the owner keeps its file");
  move(6 * MIN);
  t.equal(await file(b, g), 404, "with the second message expired too, gone");

  t.ok(await maintainer.pass(), "a pass ran");
  t.equal(await file(b, f), 404, "still 404 after the pass");
  const [left] = await node.svc.sql<{ n: number }[]>`select count(*)::int as n from message_files`;
  t.equal(left!.n, 0, "the pass removed the expired messages' file rows");
});

t.test("a reply's quote of a message that expired shows it gone (low 1)", async (t) => {
  const { node, a, b, send, move } = await setup(t);
  const first = await send(a, b, { body: "a secret worth quoting" });
  move(5 * MIN);
  const reply = await send(b, a, { body: "answered", reply_to: first.body.id });
  t.equal(reply.body.reply_to.body, "a secret worth quoting", "the quote while the message is kept");
  move(6 * MIN);
  // the answered message is past the horizon, the reply is not
  const gone = { id: first.body.id, from: reply.body.reply_to.from, body: "", deleted: true };
  const h = await call(node.url, "GET", `/v1/threads/${reply.body.thread_id}/messages`, { token: a.token });
  t.same(
    h.body.messages.map((m: { body: string }) => m.body),
    ["answered"],
  );
  t.same(h.body.messages[0].reply_to, gone, "history: the quote is gone");
  const threads = await call(node.url, "GET", "/v1/threads", { token: a.token });
  t.same(threads.body.threads[0].last_message.reply_to, gone, "the threads list: gone");
  const pending = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: a.token });
  const got = pending.body.messages.find((m: { id: string }) => m.id === reply.body.id);
  t.ok(got, "the reply is pending for its recipient");
  t.same(got.reply_to, gone, "a long poll read from Postgres: gone");
});

t.test("a replay of a send whose message expired answers no body (low 3)", async (t) => {
  const { node, maintainer, a, b, send, upload, move } = await setup(t);
  const f = await upload(a);
  const headers = { "idempotency-key": "expiring-1" };
  const first = await send(a, b, { body: "soon gone", attachments: [f] }, headers);
  t.equal(first.body.body, "soon gone");
  move(11 * MIN);
  t.ok(await maintainer.pass(), "a pass ran");
  const again = await call(node.url, "POST", "/v1/messages", {
    token: a.token,
    json: { to: b.id, body: "soon gone", attachments: [f] },
    headers,
  });
  t.equal(again.status, 201, again.text);
  t.equal(again.headers.get("idempotency-replayed"), "true", "a replay");
  t.equal(again.body.id, first.body.id, "of the same message");
  t.equal(again.body.body, "", "without its body");
  t.notOk("attachments" in again.body, "nor its files");
  t.notMatch(again.text, /soon gone/);
});
