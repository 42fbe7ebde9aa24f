// An upload's Idempotency-Key is fingerprinted by the file it carries (a SHA-256 of its bytes, taken as they stream
// in), its name and its type: other bytes of the same length under the same key are another request (422, nothing
// made), the same file again is the first answer replayed, and a multipart form sent again (a new boundary) with the
// same file is the same request.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const raw = (base: string, token: string, key: string, data: Buffer, name = "a.bin") =>
  call(base, "POST", `/v1/files/upload?name=${name}`, {
    token,
    body: data as unknown as string,
    headers: { "content-type": "application/octet-stream", "idempotency-key": key },
  });

async function form(base: string, token: string, key: string, data: Buffer, name: string) {
  const body = new FormData();
  body.append("file", new Blob([new Uint8Array(data)], { type: "application/pdf" }), name);
  const r = await fetch(`${base}/v1/files/upload`, {
    method: "POST",
    body,
    headers: { authorization: `Bearer ${token}`, "idempotency-key": key },
  });
  return { status: r.status, replayed: r.headers.get("idempotency-replayed"), text: await r.text() };
}

t.test("an upload's Idempotency-Key covers its bytes", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-upkey-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { engine: "memory", env: { FILES_DIR: dir } });
  const me = await registerAgent(node.url, "uploader");
  const files = async () =>
    Number((await node.svc.sql`select count(*)::int as n from files where owner = ${me.id}`)[0]!["n"]);

  const first = randomBytes(4096);
  const other = randomBytes(4096); // the same length and type, other bytes
  const a = await raw(node.url, me.token, "k1", first);
  t.equal(a.status, 201, a.text);
  const same = await raw(node.url, me.token, "k1", first);
  t.equal(same.status, 201);
  t.equal(same.headers.get("idempotency-replayed"), "true", "the same file again: replayed");
  t.equal(same.text, a.text);
  const changed = await raw(node.url, me.token, "k1", other);
  t.equal(changed.status, 422, `other bytes of the same length: ${changed.text}`);
  t.equal(changed.body.error, "idempotency_key_reused");
  t.equal(await files(), 1, "nothing more was made");
  const renamed = await raw(node.url, me.token, "k1", first, "b.bin");
  t.equal(renamed.status, 422, "the same bytes under another name is another request");

  // multipart: each form has a boundary of its own; the same file in a new form is the same request
  const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(2000)]);
  const f1 = await form(node.url, me.token, "k2", pdf, "report.pdf");
  t.equal(f1.status, 201, f1.text);
  const f2 = await form(node.url, me.token, "k2", pdf, "report.pdf");
  t.equal(f2.status, 201);
  t.equal(f2.replayed, "true", "the same file in a new form: replayed");
  t.equal(f2.text, f1.text);
  const f3 = await form(
    node.url,
    me.token,
    "k2",
    Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(2000)]),
    "report.pdf",
  );
  t.equal(f3.status, 422, "another file of the same size in a form: 422");
  t.equal(await files(), 2);
});
