import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { lazyBody, rawChunkedUpload, rawStatus, uploadStream } from "./helpers/uploads.ts";
import { until } from "./helpers/wait.ts";

const MiB = 1024 * 1024;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00", "latin1");
const WEBP = Buffer.from("RIFF\x24\x00\x00\x00WEBPVP8 ", "latin1");

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const upload = (base: string, token: string, data: Buffer | string, contentType: string, name?: string) =>
  call(base, "POST", `/v1/files/upload${name ? `?name=${encodeURIComponent(name)}` : ""}`, {
    token,
    body: data as string,
    headers: { "content-type": contentType },
  });

async function download(base: string, token: string, id: string) {
  const r = await fetch(`${base}/v1/files/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: r.status, headers: r.headers, data: Buffer.from(await r.arrayBuffer()) };
}

t.test("file upload and download", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flock-files-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const node = await startTestNode(t, { engine: "memory", env: { FILES_DIR: dir } });
  const base = node.url;
  const owner = await registerAgent(base, "owner");
  const tmpFiles = () => readdirSync(join(dir, "tmp"));

  t.test("a long multipart file name is cut to 255 units, never through a surrogate pair", async (t) => {
    const send = async (name: string) => {
      const form = new FormData();
      form.append("file", new Blob([PNG], { type: "image/png" }), name);
      const r = await fetch(`${base}/v1/files/upload`, {
        method: "POST",
        body: form,
        headers: { authorization: `Bearer ${owner.token}` },
      });
      t.equal(r.status, 201);
      return ((await r.json()) as { name: string }).name;
    };
    t.equal(
      await send(`${"a".repeat(254)}\u{1f600}b.png`),
      "a".repeat(254),
      "the emoji that would be cut in half is left out",
    );
    t.equal(
      await send(`${"b".repeat(253)}\u{1f600}c`),
      `${"b".repeat(253)}\u{1f600}`,
      "a whole pair within the bound stays",
    );
    t.equal(await send("résumé 😀.pdf"), "résumé 😀.pdf", "a UTF-8 file name comes through as sent");
  });

  t.test("a file name loses its bidirectional controls and control characters, raw or multipart", async (t) => {
    const names: [string, string, string][] = [
      ["a right-to-left override", "invoice\u202Egpj.exe", "invoicegpj.exe"],
      ["embeddings and a pop", "a\u202Ab\u202Bc\u202Cd.txt", "abcd.txt"],
      ["isolates", "x\u2066y\u2067z\u2068w\u2069.txt", "xyzw.txt"],
      ["bidi marks", "r\u200Fl\u200Em\u061C.txt", "rlm.txt"],
      ["C1 controls", "c1\u0085\u009B.txt", "c1.txt"],
      ["nothing but an override", "\u202E", "upload"],
    ];
    const namer = await registerAgent(base, "namer"); // its own uploads: the owner's minute of 30 is for the tests below
    for (const [what, name, kept] of names) {
      const r = await upload(base, namer.token, "hello", "text/plain", name);
      t.equal(r.status, 201, r.text);
      t.equal(r.body.name, kept, `raw: ${what}`);
      const form = new FormData();
      form.append("file", new Blob(["hello"], { type: "text/plain" }), name);
      const m = await fetch(`${base}/v1/files/upload`, {
        method: "POST",
        body: form,
        headers: { authorization: `Bearer ${namer.token}` },
      });
      t.equal(((await m.json()) as { name: string }).name, kept, `multipart: ${what}`);
    }
  });

  t.test("a raw image upload: 201 with the file object; the owner downloads the same bytes", async (t) => {
    const data = Buffer.concat([PNG, randomBytes(5000)]);
    const r = await upload(base, owner.token, data, "image/png", "cat.png");
    t.equal(r.status, 201, r.text);
    t.same(Object.keys(r.body).sort(), ["content_type", "created_at", "id", "name", "sha256", "size", "url"]);
    t.match(r.body.id, /^file_[0-9]+$/);
    t.equal(r.body.name, "cat.png");
    t.equal(r.body.content_type, "image/png");
    t.equal(r.body.size, data.length);
    t.equal(r.body.sha256, sha(data));
    t.equal(r.body.url, `/v1/files/${r.body.id}`);
    const d = await download(base, owner.token, r.body.id);
    t.equal(d.status, 200);
    t.equal(d.headers.get("content-type"), "image/png");
    t.equal(d.headers.get("content-length"), String(data.length));
    t.equal(d.headers.get("x-content-type-options"), "nosniff");
    t.match(d.headers.get("content-disposition"), /^inline; filename\*=UTF-8''cat\.png$/);
    t.ok(d.data.equals(data));
    t.same(tmpFiles(), [], "no temporary file left");
    const head = await fetch(`${base}/v1/files/${r.body.id}`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${owner.token}` },
    });
    t.equal(head.status, 200);
    t.equal(head.headers.get("content-length"), String(data.length));
    t.equal(head.headers.get("content-type"), "image/png");
  });

  t.test("every image type is recognised by its bytes", async (t) => {
    for (const [head, type] of [
      [PNG, "image/png"],
      [JPEG, "image/jpeg"],
      [GIF, "image/gif"],
      [WEBP, "image/webp"],
    ] as const) {
      const r = await upload(base, owner.token, Buffer.concat([head, randomBytes(100)]), "application/octet-stream");
      t.equal(r.status, 201);
      t.equal(r.body.content_type, type);
    }
  });

  t.test("multipart/form-data: the part named file", async (t) => {
    const data = randomBytes(200_000);
    const form = new FormData();
    form.append("note", "hello");
    form.append("file", new Blob([data], { type: "application/pdf" }), "report.pdf");
    const r = await fetch(`${base}/v1/files/upload`, {
      method: "POST",
      body: form,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    const body = await r.json();
    t.equal(r.status, 201, JSON.stringify(body));
    t.equal(body.name, "report.pdf");
    t.equal(body.content_type, "application/pdf");
    t.equal(body.size, data.length);
    t.equal(body.sha256, sha(data));
    const d = await download(base, owner.token, body.id);
    t.ok(d.data.equals(data));
    t.match(d.headers.get("content-disposition"), /^attachment;/);

    const noFile = new FormData();
    noFile.append("other", new Blob([data]), "x.bin");
    const r2 = await fetch(`${base}/v1/files/upload`, {
      method: "POST",
      body: noFile,
      headers: { authorization: `Bearer ${owner.token}` },
    });
    t.equal(r2.status, 400);
    t.equal((await r2.json()).field, "file");
    const broken = await upload(base, owner.token, "--xyz\r\nnot a form", "multipart/form-data; boundary=xyz");
    t.equal(broken.status, 400);
    const noBoundary = await upload(base, owner.token, "x", "multipart/form-data");
    t.equal(noBoundary.status, 400);
    t.same(tmpFiles(), []);
  });

  t.test("a lying Content-Type: the bytes decide", async (t) => {
    const png = Buffer.concat([PNG, randomBytes(64)]);
    const asText = await upload(base, owner.token, png, "text/plain", "sneaky.txt");
    t.equal(asText.status, 201);
    t.equal(asText.body.content_type, "image/png", "an image declared as text is an image");
    const notImage = await upload(base, owner.token, "<svg onload=alert(1)>", "image/png", "fake.png");
    t.equal(notImage.status, 201);
    t.equal(notImage.body.content_type, "application/octet-stream", "a claimed image that is not one is not believed");
    const d = await download(base, owner.token, notImage.body.id);
    t.equal(d.headers.get("content-type"), "application/octet-stream");
    t.match(d.headers.get("content-disposition"), /^attachment;/);
    // The image cap follows the bytes too: an 11 MiB PNG sent as octet-stream is refused.
    const big = lazyBody(10 * MiB + 1, PNG);
    const r = await uploadStream(base, owner.token, big.stream, "application/octet-stream");
    t.equal(r.status, 413);
    t.equal(r.body?.error, "payload_too_large");
  });

  t.test("caps, streamed: images 10 MiB, files 50 MiB; refused the moment the cap is crossed", async (t) => {
    const atImage = await uploadStream(base, owner.token, lazyBody(10 * MiB, PNG).stream, "image/png");
    t.equal(atImage.status, 201);
    t.equal(atImage.body.size, 10 * MiB);

    const overImage = lazyBody(10 * MiB + 1, PNG);
    const r1 = await uploadStream(base, owner.token, overImage.stream, "image/png");
    t.equal(r1.status, 413);
    t.equal(r1.body.limit, 10 * MiB);

    const atFile = await uploadStream(base, owner.token, lazyBody(50 * MiB).stream, "application/zip");
    t.equal(atFile.status, 201);
    t.equal(atFile.body.size, 50 * MiB);
    t.equal(atFile.body.content_type, "application/zip");
    // Downloading 50 MiB streams it back (with backpressure) byte for byte.
    const back = await fetch(`${base}/v1/files/${atFile.body.id}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    t.equal(back.headers.get("content-length"), String(50 * MiB));
    const hash = createHash("sha256");
    let got = 0;
    for await (const chunk of back.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      got += chunk.length;
    }
    t.equal(got, 50 * MiB);
    t.equal(hash.digest("hex"), atFile.body.sha256);

    const overFile = lazyBody(50 * MiB + 1);
    const r2 = await uploadStream(base, owner.token, overFile.stream, "application/zip");
    t.equal(r2.status, 413);
    t.equal(r2.body.limit, 50 * MiB);

    // Far over the cap, streamed without a length: the server answers as soon as the cap is crossed and hangs up
    // without reading the rest, so the client cannot even write it. (A client still sending when the server
    // closes may see the connection reset before it reads the 413: uWS closes at once rather than linger.)
    const huge = await rawChunkedUpload(base, owner.token, "image/png", 200 * MiB, PNG);
    t.ok(huge.status === 413 || huge.reset, `413 or reset (got ${huge.status})`);
    t.ok(huge.written < 40 * MiB, `only ${(huge.written / MiB).toFixed(1)} MiB of 200 MiB could be written`);

    // An announced length over the cap is refused before any byte of the body is sent.
    const announced = await rawStatus(
      base,
      "POST /v1/files/upload HTTP/1.1\r\nHost: x\r\n" +
        `Authorization: Bearer ${owner.token}\r\nContent-Type: application/zip\r\nContent-Length: ${50 * MiB + 1}\r\n\r\n`,
    );
    t.equal(announced, 413);

    const multipartOver = new FormData();
    multipartOver.append("file", new Blob([PNG, Buffer.alloc(10 * MiB + 1 - PNG.length)]), "big.png");
    const r4 = await fetch(`${base}/v1/files/upload`, {
      method: "POST",
      body: multipartOver,
      headers: { authorization: `Bearer ${owner.token}` },
    })
      .then(async (r) => ({ status: r.status, body: await r.json() }))
      .catch(() => ({ status: 0, body: undefined }));
    t.equal(r4.status, 413);

    const rows = await node.svc.sql`select size from files where owner = ${owner.id} and size > ${String(MiB)}`;
    t.same(rows.map((r) => Number(r.size)).sort(), [10 * MiB, 50 * MiB], "only the uploads at the cap were stored");
    t.same(tmpFiles(), [], "refused uploads left nothing behind");
  });

  t.test("an empty upload is refused", async (t) => {
    const r = await upload(base, owner.token, "", "text/plain");
    t.equal(r.status, 400);
    t.equal(r.body.field, "file");
  });

  t.test("an aborted upload leaves nothing behind", async (t) => {
    const before = (await node.svc.sql`select count(*)::int as n from files`)[0]!.n;
    const port = new URL(base).port;
    const sock = connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    sock.write(
      "POST /v1/files/upload?name=half.bin HTTP/1.1\r\nHost: x\r\n" +
        `Authorization: Bearer ${owner.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${5 * MiB}\r\n\r\n`,
    );
    sock.write(Buffer.alloc(MiB, 1));
    await until(() => tmpFiles().length === 1, { ms: 5000, every: 10, what: "the upload to be staged" });
    sock.destroy();
    await until(() => tmpFiles().length === 0, { ms: 5000, every: 10, what: "the staged file to be removed" });
    t.same(tmpFiles(), []);
    t.equal((await node.svc.sql`select count(*)::int as n from files`)[0]!.n, before, "no row");
    // the server is fine afterwards
    t.equal((await upload(base, owner.token, "after", "text/plain")).status, 201);
  });

  t.test("download: the owner and the recipients of a message carrying it; strangers get 404", async (t) => {
    const human = await signInWithWallet(base);
    const recipient = await registerAgent(base, "recipient");
    const stranger = await registerAgent(base, "stranger");
    const data = randomBytes(3000);
    const up = await upload(base, human.token, data, "application/octet-stream", "secret.bin");
    t.equal(up.status, 201);
    t.equal((await download(base, human.token, up.body.id)).status, 200, "human owner");
    t.equal((await download(base, recipient.token, up.body.id)).status, 404, "not shared yet");

    const attach = (from: string, to: string) =>
      call(base, "POST", "/v1/messages", { token: from, json: { to, body: "file", attachments: [up.body.id] } });
    const refused = await attach(recipient.token, stranger.id);
    t.equal(refused.status, 400, "only the owner can attach (and so share) a file");
    t.equal(refused.body.field, "attachments");
    t.equal((await download(base, stranger.token, up.body.id)).status, 404, "the refused send shared nothing");
    t.equal((await attach(human.token, recipient.id)).status, 201);
    t.equal((await attach(human.token, recipient.id)).status, 201, "sharing twice is harmless");

    const asRecipient = await download(base, recipient.token, up.body.id);
    t.equal(asRecipient.status, 200);
    t.ok(asRecipient.data.equals(data));
    const asStranger = await fetch(`${base}/v1/files/${up.body.id}`, {
      headers: { authorization: `Bearer ${stranger.token}` },
    });
    t.equal(asStranger.status, 404);
    t.equal((await asStranger.json()).error, "not_found");
    t.equal((await download(base, owner.token, "file_123")).status, 404, "unknown id");
    t.equal((await download(base, owner.token, "nonsense")).status, 404, "malformed id");
    t.equal((await fetch(`${base}/v1/files/${up.body.id}`)).status, 401, "no token");
  });

  t.test("same bytes, one blob", async (t) => {
    const other = await registerAgent(base, "other");
    const data = randomBytes(1000);
    const a = await upload(base, owner.token, data, "application/octet-stream");
    const b = await upload(base, other.token, data, "application/octet-stream");
    t.equal(a.body.sha256, b.body.sha256);
    t.not(a.body.id, b.body.id);
    const s = a.body.sha256 as string;
    t.same(readdirSync(join(dir, s.slice(0, 2), s.slice(2, 4))), [s]);
  });

  t.test("30 uploads per minute per principal", async (t) => {
    const busy = await registerAgent(base, "busy");
    for (let i = 0; i < 30; i++) t.equal((await upload(base, busy.token, `n${i}`, "text/plain")).status, 201);
    const r = await upload(base, busy.token, "one more", "text/plain");
    t.equal(r.status, 429);
    t.equal(r.body.error, "rate_limited");
    t.equal((await upload(base, owner.token, "others unaffected", "text/plain")).status, 201);
  });
});
