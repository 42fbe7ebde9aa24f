// The SDK's Idempotency-Key: every creating call sends one key, the same on each of its retries (a 503, a 409 "still
// running", no answer at all), the caller may pass its own, and a paid send's 402 attempt and paid retry share it.
// First against a stand-in server on a real socket (what the SDK sends and how it retries, on the fake clock), then
// against a real node (the first answer replayed, nothing stored twice).
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import t from "tap";
import { Flock, FlockError, type PaymentHandler, type RetryEvent } from "../client/index.ts";
import { FakeClock } from "./helpers/clock.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const KEY = /^[A-Za-z0-9_-]{22}$/;

interface Seen {
  method: string;
  path: string;
  key: string | undefined;
  paid: boolean;
  body: string;
}

/** A stand-in server: records every request, answers with `answer` (201 {} unless it says otherwise). */
async function standIn(
  t: { teardown(fn: () => void): void },
  answer: (req: Seen, n: number, res: ServerResponse) => boolean | void = () => false,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const srv = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const s: Seen = {
        method: req.method ?? "",
        path: new URL(req.url ?? "/", "http://x").pathname,
        key: req.headers["idempotency-key"] as string | undefined,
        paid: req.headers["payment-signature"] !== undefined,
        body,
      };
      const n = seen.filter((x) => x.key !== undefined && x.key === s.key).length;
      seen.push(s);
      if (answer(s, n, res)) return;
      res.writeHead(s.method === "POST" ? 201 : 200, { "content-type": "application/json" });
      res.end(
        s.path === "/v1/groups"
          ? JSON.stringify({ group: { id: "group_1" } })
          : s.path === "/v1/moments/feed"
            ? '{"moments":[],"has_more":false}'
            : "{}",
      );
    });
  });
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  t.teardown(() => srv.close());
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
  return true;
};

t.test("what the SDK sends (a stand-in server)", async (t) => {
  t.test("every creating call sends a fresh key; reads, likes and acks send none", async (t) => {
    const { url, seen } = await standIn(t);
    const flock = new Flock({ baseUrl: url, token: "am_x", sendsPerSecond: 1000 });
    await flock.send("2", "hi");
    await flock.sendGroup("group_1", "hi all");
    await flock.post({ content: "c", visibility: "public" });
    await flock.comment("moment_1", "nice");
    await flock.friendRequest("3");
    await flock.createGroup({ name: "g", members: ["2"] });
    await flock.upload(new Uint8Array([1, 2, 3]), { name: "a.bin" });
    await flock.like("moment_1");
    await flock.ack("msg_1");
    await flock.feed();
    const creating = seen.slice(0, 7);
    t.same(
      creating.map((s) => s.path),
      [
        "/v1/messages",
        "/v1/groups/group_1/messages",
        "/v1/moments",
        "/v1/moments/moment_1/comments",
        "/v1/friends/request",
        "/v1/groups",
        "/v1/files/upload",
      ],
    );
    for (const s of creating) t.match(s.key, KEY, `${s.path}: 16 random bytes, base64url`);
    t.equal(new Set(creating.map((s) => s.key)).size, 7, "one key per call");
    t.same(
      seen.slice(7).map((s) => s.key),
      [undefined, undefined, undefined],
      "none on a like, an ack or a read",
    );
  });

  t.test("the caller's own key goes as given; an invalid one is refused before anything is sent", async (t) => {
    const { url, seen } = await standIn(t);
    const flock = new Flock({ baseUrl: url, token: "am_x" });
    await flock.send("2", "hi", {}, { idempotencyKey: "order-17/line-3" });
    await flock.post({ content: "c", visibility: "public" }, { idempotencyKey: "~".repeat(255) });
    t.same(
      seen.map((s) => s.key),
      ["order-17/line-3", "~".repeat(255)],
    );
    for (const bad of ["", "has space", "é", "x".repeat(256), "tab\t"]) {
      await t.rejects(flock.send("2", "hi", {}, { idempotencyKey: bad }), { name: "RangeError" }, JSON.stringify(bad));
    }
    t.equal(seen.length, 2, "nothing sent for the invalid keys");
  });

  t.test("a keyed POST is retried with the same key after a 503, no answer, and a 409 still running", async (t) => {
    const { url, seen } = await standIn(t, (s, n, res) => {
      if (s.key === undefined) return json(res, 503, { error: "unavailable", message: "down" });
      if (n === 0) return json(res, 503, { error: "unavailable", message: "down" }, { "retry-after": "1" });
      if (n === 1) {
        res.socket?.destroy(); // no answer at all
        return true;
      }
      if (n === 2) return json(res, 409, { error: "conflict", message: "still running" }, { "retry-after": "1" });
      return json(res, 201, { id: "msg_1" }, { "idempotency-replayed": "true" });
    });
    const clock = new FakeClock();
    const events: RetryEvent[] = [];
    const flock = new Flock({ baseUrl: url, token: "am_x", clock, random: () => 0.5, onRetry: (e) => events.push(e) });
    const m = await flock.send("2", "hi");
    t.equal(m.id, "msg_1");
    t.equal(seen.length, 4);
    t.equal(new Set(seen.map((s) => s.key)).size, 1, "the same key on all four attempts");
    t.ok(
      seen.every((s) => s.body === seen[0]!.body),
      "and the same request",
    );
    t.same(
      events.map((e) => [e.status, e.code, e.retryAfter]),
      [
        [503, "unavailable", true],
        [0, "UND_ERR_SOCKET", false],
        [409, "conflict", true],
      ],
    );
    t.ok(
      events.every((e) => e.idempotencyKey === seen[0]!.key),
      "each retry event names the key",
    );
    t.same(clock.sleeps, [1000, 2500, 1000], "Retry-After, then the backoff (no answer), then Retry-After");

    seen.length = 0;
    const register = await new Flock({ baseUrl: url, clock }).register({ display_name: "x" }).catch((e: unknown) => e);
    t.equal((register as FlockError).status, 503, "a POST without a key is not retried after a 503");
    t.equal(seen.length, 1);
  });

  t.test("final answers: 422 idempotency_key_reused, and a 409 without Retry-After (a reused nonce)", async (t) => {
    const { url, seen } = await standIn(t, (s, _n, res) =>
      s.path === "/v1/moments"
        ? json(res, 422, {
            error: "idempotency_key_reused",
            message: "this Idempotency-Key was used with a different request",
          })
        : json(res, 409, { error: "conflict", message: "this payment authorization (nonce) has already been used" }),
    );
    const flock = new Flock({ baseUrl: url, token: "am_x", clock: new FakeClock() });
    const reused = await flock
      .post({ content: "other", visibility: "public" }, { idempotencyKey: "k1" })
      .catch((e: unknown) => e);
    t.ok(reused instanceof FlockError);
    t.match(reused, { status: 422, code: "idempotency_key_reused" });
    const nonce = await flock.send("2", "hi").catch((e: unknown) => e);
    t.match(nonce, { status: 409, code: "conflict", retryAfter: undefined });
    t.equal(seen.length, 2, "neither is retried");
  });

  t.test("no answer, without a key or with the caller's signal aborted: not retried", async (t) => {
    const { url, seen } = await standIn(t, (_s, _n, res) => {
      res.socket?.destroy();
      return true;
    });
    const flock = new Flock({ baseUrl: url, token: "am_x", clock: new FakeClock() });
    await t.rejects(
      flock.like("moment_1"),
      { name: "FlockNetworkError", status: 0, retryable: true },
      "a like (no key) that got no answer raises at once",
    );
    t.equal(seen.length, 1);
    seen.length = 0;
    await t.rejects(flock.send("2", "hi"), { name: "FlockNetworkError" }, "a keyed send gives up after 5 attempts");
    t.equal(seen.length, 5);
    t.equal(new Set(seen.map((s) => s.key)).size, 1);
  });

  t.test("a paid send: the 402 attempt and the paid retry send the same key", async (t) => {
    const requirements = {
      x402Version: 2,
      accepts: [
        {
          scheme: "exact",
          network: "eip155:8453",
          amount: "50000",
          asset: "0xa",
          payTo: "0xb",
          maxTimeoutSeconds: 60,
          extra: {},
        },
      ],
    };
    const { url, seen } = await standIn(t, (s, n, res) => {
      if (!s.paid) return json(res, 402, { error: "payment_required", message: "pay", ...requirements });
      if (n === 1) return json(res, 503, { error: "unavailable", message: "down" }, { "retry-after": "0" });
      return json(res, 201, { id: "msg_1", payment: { transaction: "0x1" } });
    });
    let signed = 0;
    const payer: PaymentHandler = {
      headersFor: async () => {
        signed++;
        return { "payment-signature": "signed" };
      },
    };
    const flock = new Flock({ baseUrl: url, token: "am_x", payments: payer, clock: new FakeClock() });
    const m = await flock.send("2", "paid hello", {}, { idempotencyKey: "pay-1" });
    t.equal(m.id, "msg_1");
    t.same(
      seen.map((s) => [s.paid, s.key]),
      [
        [false, "pay-1"],
        [true, "pay-1"],
        [true, "pay-1"],
      ],
    );
    t.equal(signed, 1, "signed once; the paid retry after the 503 sends the same payment");
  });
});

t.test("against a real node: the first answer, replayed; nothing stored twice", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const [a, b] = [await registerAgent(node.url, "idem-a"), await registerAgent(node.url, "idem-b")];
  let replayed = 0;
  let dropNext = false;
  // a fetch that can lose an answer: the request reaches the node and is done, and the client sees the connection fail
  const losing: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.headers.get("idempotency-replayed") === "true") replayed++;
    if (dropNext) {
      dropNext = false;
      await res.arrayBuffer();
      throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    }
    return res;
  };
  const alice = new Flock({
    baseUrl: node.url,
    token: a.token,
    fetch: losing,
    sendsPerSecond: 1000,
    retry: { baseMs: 1 },
  });
  const bob = new Flock({ baseUrl: node.url, token: b.token, sendsPerSecond: 1000 });

  t.test(
    "a send whose answer was lost: the SDK's retry gets the first answer, the message is stored and delivered once",
    async (t) => {
      replayed = 0;
      dropNext = true;
      const sent = await alice.send(b.id, "lost answer");
      t.equal(replayed, 1, "the retry's answer was the replay");
      const got = await bob.pending({ timeout: 1 });
      t.same(
        got.map((m) => m.id),
        [sent.id],
        "one message, the one the retry named",
      );
      await bob.ack(sent.id);
      const history = await bob.threadMessages(sent.thread_id);
      t.equal(history.messages.filter((m) => m.body === "lost answer").length, 1);
    },
  );

  t.test("the same key again: the same message; with another body: 422", async (t) => {
    replayed = 0;
    const first = await alice.send(b.id, "once", {}, { idempotencyKey: "idem-once" });
    const again = await alice.send(b.id, "once", {}, { idempotencyKey: "idem-once" });
    t.equal(again.id, first.id);
    t.equal(replayed, 1);
    const err = await alice.send(b.id, "something else", {}, { idempotencyKey: "idem-once" }).catch((e: unknown) => e);
    t.match(err, { status: 422, code: "idempotency_key_reused" });
    const got = await bob.pending({ timeout: 1 });
    t.same(
      got.map((m) => m.body),
      ["once"],
    );
    await bob.ack(got[0]!.id);
  });

  t.test("every creating call answers its first answer to a repeated key", async (t) => {
    const same = async <T>(name: string, call: (o: { idempotencyKey: string }) => Promise<T>, id: (x: T) => string) => {
      const o = { idempotencyKey: `idem-${name.replace(/ /g, "-")}` };
      const [x, y] = [await call(o), await call(o)];
      t.equal(id(y), id(x), name);
    };
    const m = await alice.post({ content: "idem moment", visibility: "public" });
    await same(
      "post",
      (o) => alice.post({ content: "keyed moment", visibility: "public" }, o),
      (x) => x.id,
    );
    await same(
      "comment",
      (o) => alice.comment(m.id, "keyed comment", o),
      (x) => x.id,
    );
    await same(
      "friend request",
      (o) => alice.friendRequest(b.id, o),
      (x) => x.request.id,
    );
    await same(
      "group",
      (o) => alice.createGroup({ name: "keyed", members: [b.id] }, o),
      (x) => x.id,
    );
    const g = await alice.createGroup({ name: "g", members: [b.id] });
    await same(
      "group message",
      (o) => alice.sendGroup(g.id, "keyed group message", {}, o),
      (x) => x.id,
    );
    await same(
      "upload",
      (o) => alice.upload(new Uint8Array([1, 2, 3]), { name: "k.bin", contentType: "application/octet-stream", ...o }),
      (x) => x.id,
    );
    t.equal((await alice.comments(m.id)).filter((c) => c.body === "keyed comment").length, 1);
  });
});
