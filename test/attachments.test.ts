// Message attachments end to end over real sockets: the sender uploads, sends with `attachments`, and the
// recipients see the files' metadata in the 201, pending, the WebSocket, history and the threads
// list, and download the same bytes; someone else's file is refused with nothing written; non-recipients get 404.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PaymentRequirements } from "@x402/core/types";
import t from "tap";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, pending, send } from "./messaging-helpers.ts";
import { paidAgent, signedHeader } from "./payments-helpers.ts";

interface Uploaded {
  id: string;
  name: string;
  content_type: string;
  size: number;
  url: string;
}

async function upload(
  base: string,
  who: Registered,
  data: Buffer,
  contentType: string,
  name: string,
): Promise<Uploaded> {
  const r = await call(base, "POST", `/v1/files/upload?name=${encodeURIComponent(name)}`, {
    token: who.token,
    body: data as unknown as string,
    headers: { "content-type": contentType },
  });
  if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${r.text}`);
  return r.body;
}

async function download(base: string, who: Registered, url: string) {
  const r = await fetch(base + url, { headers: { authorization: `Bearer ${who.token}` } });
  return { status: r.status, data: Buffer.from(await r.arrayBuffer()) };
}

/** What a message carries for an uploaded file. */
const meta = (f: Uploaded) => ({ id: f.id, name: f.name, content_type: f.content_type, size: f.size, url: f.url });

for (const engine of ["redis", "memory"] as const) {
  t.test(`attachments (${engine} engines, real Postgres)`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "flock-attach-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const node = await startTestNode(t, { engine, env: { FILES_DIR: dir } });
    const base = node.url;
    const sql = node.svc.sql;
    const messagesBy = async (sender: string) =>
      (await sql`select count(*)::int as n from messages where sender = ${sender}`)[0]!["n"] as number;

    t.test(
      "a direct message carries its files: 201, WebSocket, pending, history, threads; the recipient downloads",
      async (t) => {
        const alice = await registerAgent(base, "Alice");
        const bob = await registerAgent(base, "Bob");
        const carol = await registerAgent(base, "Carol");
        const pdf = randomBytes(3000);
        const txt = Buffer.from("minutes of the meeting\n");
        const f1 = await upload(base, alice, pdf, "application/pdf", "report.pdf");
        const f2 = await upload(base, alice, txt, "text/plain", "notes.txt");
        t.equal((await download(base, bob, f1.url)).status, 404, "not shared before the message");

        const ws = await Client.open(base, { token: bob.token });
        t.teardown(() => ws.close());
        await ws.nextOfType("ready");

        const r = await send(base, alice, bob.id, "see attached", { attachments: [f1.id, f2.id] });
        t.equal(r.status, 201, r.text);
        const want = [meta(f1), meta(f2)];
        t.same(r.body.attachments, want, "the 201 lists the files in the order given");
        t.same(Object.keys(r.body.attachments[0]).sort(), ["content_type", "id", "name", "size", "url"]);
        t.equal(r.body.attachments[0].size, pdf.length);

        const frame = await ws.next((f) => f.type === "message" && f.message.id === r.body.id);
        t.same(frame.message.attachments, want, "the WebSocket delivery carries them");

        const got = (await pending(base, bob)).find((m) => m.id === r.body.id);
        t.same(got?.attachments, want, "pending (read past the inbox cursor in Postgres) carries them");

        for (const who of [alice, bob]) {
          const h = await call(base, "GET", `/v1/threads/${r.body.thread_id}/messages`, { token: who.token });
          t.equal(h.status, 200);
          t.same(h.body.messages[0].attachments, want, "history carries them");
          const threads = await call(base, "GET", "/v1/threads", { token: who.token });
          const th = threads.body.threads.find((x: { id: string }) => x.id === r.body.thread_id);
          t.same(th?.last_message?.attachments, want, "the threads list's last message carries them");
        }

        const d1 = await download(base, bob, frame.message.attachments[0].url);
        t.equal(d1.status, 200, "the recipient downloads the file");
        t.ok(d1.data.equals(pdf), "the same bytes");
        const d2 = await download(base, bob, f2.url);
        t.equal(d2.status, 200);
        t.ok(d2.data.equals(txt));
        t.equal((await download(base, carol, f1.url)).status, 404, "a non-recipient still gets 404");
        t.equal((await download(base, alice, f1.url)).status, 200, "the owner still downloads it");

        const plain = await send(base, alice, bob.id, "no files");
        t.equal(plain.status, 201);
        t.notOk("attachments" in plain.body, "a message without files has no attachments field");
        const empty = await send(base, alice, bob.id, "empty list", { attachments: [] });
        t.equal(empty.status, 201);
        t.notOk("attachments" in empty.body, "an empty list is the same as none");
      },
    );

    t.test(
      "only the sender's own files: another's or an unknown id is refused alike, and nothing is written",
      async (t) => {
        const alice = await registerAgent(base, "Alice");
        const bob = await registerAgent(base, "Bob");
        const mallory = await registerAgent(base, "Mallory");
        const secret = await upload(base, alice, Buffer.from("alice's secret"), "text/plain", "secret.txt");
        const own = await upload(base, mallory, Buffer.from("mallory's own"), "text/plain", "own.txt");

        const before = await messagesBy(mallory.id);
        const theirs = await send(base, mallory, bob.id, "look", { attachments: [own.id, secret.id] });
        t.equal(theirs.status, 400, theirs.text);
        t.equal(theirs.body.error, "invalid_request");
        t.equal(theirs.body.field, "attachments");
        const unknown = await send(base, mallory, bob.id, "look", { attachments: [own.id, "file_123"] });
        t.equal(unknown.status, 400);
        t.equal(unknown.body.field, "attachments");
        t.equal(
          theirs.body.message.replace(secret.id, "file_X"),
          unknown.body.message.replace("file_123", "file_X"),
          "another's file reads exactly as one that does not exist",
        );
        t.equal(await messagesBy(mallory.id), before, "no message stored");
        t.same(await pending(base, bob), [], "nothing delivered");
        t.equal((await download(base, bob, secret.url)).status, 404, "the recipient did not get alice's file");
        t.equal((await download(base, bob, own.url)).status, 404, "nor mallory's own, from the refused send");
        t.equal((await download(base, mallory, secret.url)).status, 404, "nor mallory");

        for (const bad of [
          ["nonsense"],
          [123],
          "file_1",
          [own.id, own.id.replace("file_", "file_9")],
          Array.from({ length: 11 }, () => own.id),
        ]) {
          const r = await send(base, mallory, bob.id, "x", { attachments: bad });
          t.equal(r.status, 400, `${JSON.stringify(bad).slice(0, 40)}: ${r.text}`);
          t.match(r.body.field, /^attachments(\.[0-9]+)?$/);
        }
        t.equal(await messagesBy(mallory.id), before, "still nothing stored");

        const dup = await send(base, mallory, bob.id, "twice", { attachments: [own.id, own.id] });
        t.equal(dup.status, 201, "a file named twice is attached once");
        t.same(dup.body.attachments, [meta(own)]);
        const ten = await send(base, mallory, bob.id, "ten", { attachments: Array.from({ length: 10 }, () => own.id) });
        t.equal(ten.status, 201, "ten ids are allowed");
      },
    );

    t.test("a group message shares its files with every other member; non-members get 404", async (t) => {
      const alice = await registerAgent(base, "Alice");
      const bob = await registerAgent(base, "Bob");
      const carol = await registerAgent(base, "Carol");
      const dave = await registerAgent(base, "Dave");
      const g = await call(base, "POST", "/v1/groups", {
        token: alice.token,
        json: { name: "crew", members: [bob.id, carol.id] },
      });
      t.equal(g.status, 201, g.text);
      const data = randomBytes(2048);
      const f = await upload(base, alice, data, "application/octet-stream", "blob.bin");

      const ws = await Client.open(base, { token: carol.token });
      t.teardown(() => ws.close());
      await ws.nextOfType("ready");

      const post = (who: Registered, json: unknown) =>
        call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: who.token, json });
      const stranger = await upload(base, dave, Buffer.from("dave"), "text/plain", "d.txt");
      const refused = await post(alice, { body: "x", attachments: [stranger.id] });
      t.equal(refused.status, 400, refused.text);
      t.equal(refused.body.field, "attachments");
      t.equal(await messagesBy(alice.id), 0, "nothing stored");

      const r = await post(alice, { body: "for the crew", attachments: [f.id] });
      t.equal(r.status, 201, r.text);
      t.equal(r.body.to, g.body.group.id);
      t.same(r.body.attachments, [meta(f)]);
      t.same((await pending(base, bob)).find((m) => m.id === r.body.id)?.attachments, [meta(f)], "pending");
      const frame = await ws.next((x) => x.type === "message" && x.message.id === r.body.id);
      t.same(frame.message.attachments, [meta(f)], "WebSocket");
      const h = await call(base, "GET", `/v1/threads/${r.body.thread_id}/messages`, { token: carol.token });
      t.same(h.body.messages[0].attachments, [meta(f)], "history");
      for (const who of [bob, carol]) {
        const d = await download(base, who, f.url);
        t.equal(d.status, 200, `${who.display_name} downloads it`);
        t.ok(d.data.equals(data));
      }
      t.equal((await download(base, dave, f.url)).status, 404, "a non-member gets 404");
    });
  });
}

t.test("a paid send carries its files: checked before the 402, shared with the paid agent once settled", async (t) => {
  const payer = hardhatAccount(2);
  const env = await startPaymentsEnv({ fund: [payer.address] });
  t.teardown(() => env.stop());
  const dir = mkdtempSync(join(tmpdir(), "flock-attach-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { engine: "redis", env: { ...env.env, FILES_DIR: dir } });
  const base = node.url;
  const oracle = await paidAgent(base, env.network, 0.05);
  const alice = await registerAgent(base, "Alice");
  const other = await registerAgent(base, "Other");
  const data = randomBytes(1500);
  const f = await upload(base, alice, data, "application/octet-stream", "question.bin");
  const theirs = await upload(base, other, Buffer.from("not alice's"), "text/plain", "x.txt");
  const sendPaid = (attachments: string[], headers: Record<string, string> = {}) =>
    call(base, "POST", "/v1/messages", {
      token: alice.token,
      json: { to: oracle.id, body: "paid, with a file", attachments },
      headers,
    });

  const bad = await sendPaid([theirs.id]);
  t.equal(bad.status, 400, "a file not the sender's is refused before any payment is asked for");
  t.equal(bad.body.field, "attachments");
  const asked = await sendPaid([f.id]);
  t.equal(asked.status, 402, asked.text);
  const req = asked.body.accepts[0] as PaymentRequirements;
  t.equal(
    (await sendPaid([theirs.id], { "payment-signature": await signedHeader(payer, req) })).status,
    400,
    "nor with a payment",
  );
  t.equal((await node.svc.sql`select count(*)::int as n from payments`)[0]!["n"], 0, "nothing claimed or charged");

  const paid = await sendPaid([f.id], { "payment-signature": await signedHeader(payer, req) });
  t.equal(paid.status, 201, paid.text);
  t.ok(paid.body.payment, "settled");
  t.same(paid.body.attachments, [meta(f)]);
  t.same((await pending(base, oracle)).find((m) => m.id === paid.body.id)?.attachments, [meta(f)], "pending");
  const h = await call(base, "GET", `/v1/threads/${paid.body.thread_id}/messages`, { token: oracle.token });
  t.same(h.body.messages[0].attachments, [meta(f)], "history");
  const d = await download(base, oracle, f.url);
  t.equal(d.status, 200, "the paid agent downloads the file");
  t.ok(d.data.equals(data));
  t.equal((await download(base, other, f.url)).status, 404, "others still get 404");
});
