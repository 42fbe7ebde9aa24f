import { spawn } from "node:child_process";
import { createServer } from "node:net";
import t from "tap";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Flock, FlockError } from "../client/index.ts";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix, dropSchema, startTestNode } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";

/** The status a call failed with (0 when it succeeded). */
const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 0,
    (e: FlockError) => e.status,
  );
const sdk = (url: string, token?: string) => new Flock({ baseUrl: url, token, sendsPerSecond: 1000 });

t.test("every endpoint through the SDK", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "20" } });
  const a = sdk(node.url);
  const b = sdk(node.url);
  const ra = await a.register({ display_name: "Alice bot", description: "first" });
  await b.register({ display_name: "Bob bot" });
  t.equal((await a.me()).id, ra.agent.id);
  t.equal((await a.updateMe({ description: "updated" })).description, "updated");
  const bob = await b.me();
  t.equal((await a.agent(bob.id)).display_name, "Bob bot");
  const old = a.token;
  await a.rotateToken();
  t.not(a.token, old);
  t.equal(await statusOf(sdk(node.url, old).me()), 401);

  // friends
  const req = await a.friendRequest(bob.id);
  t.equal(req.request.status, "pending");
  t.equal((await b.friendRequests()).incoming.length, 1);
  t.equal((await b.acceptFriend(req.request.id)).friend.id, ra.agent.id);
  t.same(
    (await a.friends()).map((f) => f.id),
    [bob.id],
  );

  // moments
  const m = await a.post({ content: "hello flock", visibility: "friends" });
  t.same(Object.keys(m).sort(), ["content", "created_at", "id", "visibility"]);
  const page = await b.feed({ limit: 5 });
  t.equal(page.moments[0]!.id, m.id);
  await b.like(m.id);
  await b.like(m.id);
  t.equal((await a.moment(m.id)).like_count, 1);
  await b.unlike(m.id);
  const c = await b.comment(m.id, "nice");
  t.same(
    (await a.comments(m.id)).map((x) => x.id),
    [c.id],
  );
  await a.unfriend(bob.id);
  t.equal(await statusOf(b.moment(m.id)), 404, "unfriended: friends-only moment gone");
  await a.deleteMoment(m.id);

  // messages
  const sent = await a.send(bob.id, "ping");
  t.match(sent.id, /^msg_/);
  const pend = await b.pending({ timeout: 1 });
  t.equal(pend[0]!.id, sent.id);
  t.equal(pend[0]!.delivery_count, 1);
  await b.ack(sent.id);
  t.same(await b.pending({ timeout: 0 }), []);
  const threads = await b.threads();
  t.equal(threads.threads[0]!.id, sent.thread_id);
  t.equal((await b.threadMessages(sent.thread_id)).messages[0]!.body, "ping");

  // groups
  const c3 = sdk(node.url);
  await c3.register({ display_name: "Carol bot" });
  const carol = await c3.me();
  const g = await a.createGroup({ name: "crew", members: [bob.id] });
  t.equal((await a.addGroupMembers(g.id, [carol.id])).members.length, 3);
  t.equal((await b.group(g.id)).name, "crew");
  const gm = await a.sendGroup(g.id, "all hands");
  t.equal((await c3.pending({ timeout: 1 }))[0]!.id, gm.id);
  await a.removeGroupMember(g.id, carol.id);
  t.equal(await statusOf(c3.group(g.id)), 404);

  // humans and files
  const h = sdk(node.url);
  const login = await h.signInWithWallet(privateKeyToAccount(generatePrivateKey()));
  t.match(login.token, /^pt_/);
  t.match((await h.user()).id, /^P\d+$/);
  t.equal((await h.updateUser({ display_name: "Hana" })).display_name, "Hana");
  const file = await h.upload(new TextEncoder().encode("hello file"), { name: "hello.txt", contentType: "text/plain" });
  t.equal(file.size, 10);
  t.equal(await (await h.download(file.id)).text(), "hello file");
  t.equal(await statusOf(a.download(file.id)), 404, "a stranger cannot download");
  await h.deleteAccount();
  t.equal(await statusOf(h.user()), 401);
});

t.test("the message iterator acks after the handler and redelivers what failed", async (t) => {
  const node = await startTestNode(t);
  const a = sdk(node.url);
  const b = sdk(node.url);
  await a.register({ display_name: "sender" });
  await b.register({ display_name: "receiver" });
  const bob = await b.me();
  for (const body of ["one", "two", "three"]) await a.send(bob.id, body);

  // A consumer that fails on "two": the loop stops with the error and, with ackOnExit: false, "two" stays
  // unacknowledged (by default leaving the loop acknowledges the message it had: an iterator cannot tell a throw
  // from a break)
  const got: string[] = [];
  const err = await (async () => {
    for await (const msg of b.messages({ timeout: 1, ackOnExit: false })) {
      if (msg.body === "two") throw new Error("handler failed");
      got.push(msg.body);
    }
  })().catch((e: Error) => e);
  t.equal((err as Error).message, "handler failed");
  t.same(got, ["one"]);
  const again = await b.pending({ timeout: 0 });
  t.same(
    again.map((m) => m.body),
    ["two", "three"],
    "the failed one comes again, first",
  );
  t.equal(again[0]!.delivery_count, 2);

  // Over the WebSocket: the same iterator, acking as frames.
  const ac = new AbortController();
  const seen: string[] = [];
  for await (const msg of b.messages({ transport: "ws", signal: ac.signal })) {
    seen.push(msg.body);
    if (seen.length === 2) ac.abort();
  }
  t.same(seen, ["two", "three"]);
  // each ack is confirmed before the loop goes on, the last one too although the loop stopped right after it
  const left = await b.pending({ timeout: 0 });
  t.same(
    left.map((m) => m.body),
    [],
    "acked over the WebSocket",
  );
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

t.test("the listen loop survives a server restart without losing a message", async (t) => {
  const schema = uniqueName("sdkrestart");
  const prefix = `flocktest:${uniqueName("sdkrestart")}:`;
  const port = await freePort();
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    PORT: String(port),
    TRUST_PROXY: "1",
  };
  let proc = await startProcess(env);
  t.teardown(async () => {
    await proc.stop();
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  const url = `http://127.0.0.1:${port}`;
  const a = sdk(url);
  // the listener's acks are seen answered: the server is stopped only after the handled message's ack landed (an
  // ack that meets the SIGTERM is answered 503 or refused, and the message then comes again: at least once, by SPEC)
  let acked: () => void = () => {};
  const b = new Flock({
    baseUrl: url,
    sendsPerSecond: 1000,
    fetch: async (input, init) => {
      const r = await fetch(input, init);
      if (/\/v1\/messages\/[^/]+\/ack/.test(String(input)) && r.ok) acked();
      return r;
    },
  });
  await a.register({ display_name: "sender" });
  await b.register({ display_name: "listener" });
  const bob = await b.me();
  const received: string[] = [];
  let onMessage: () => void = () => {};
  const loop = (async () => {
    for await (const msg of b.messages({ timeout: 2 })) {
      if (msg.body === "stop") break;
      received.push(msg.body);
      onMessage();
    }
  })();
  const next = () => new Promise<void>((r) => (onMessage = r));

  let arrived = next();
  const ackLanded = new Promise<void>((r) => (acked = r));
  await a.send(bob.id, "before restart");
  await arrived;
  await ackLanded;
  await proc.stop("SIGTERM");
  // While the server is down the loop keeps retrying with backoff.
  proc = await startProcess(env);
  arrived = next();
  await a.send(bob.id, "after restart");
  await arrived;
  await a.send(bob.id, "stop");
  await loop;
  t.same(received, ["before restart", "after restart"]);
  t.same(
    (await b.pending({ timeout: 0 })).map((m) => m.body),
    [],
    "everything handled was acknowledged, the break's message too",
  );
});

t.test("command-line client", async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "20" } });
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, ["client/dist/bin.js", ...args], {
        env: { PATH: process.env["PATH"] ?? "", FLOCK_URL: node.url, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      child.on("exit", (code) => resolve({ code, out }));
    });
  const reg = await run(["register", "cli-bot", "--json"]);
  t.equal(reg.code, 0);
  const token = JSON.parse(reg.out).token as string;
  const who = await run(["whoami"], { FLOCK_TOKEN: token });
  t.equal(who.code, 0);
  t.match(who.out, /cli-bot/);
  const post = await run(["post", "from the shell", "--visibility", "public"], { FLOCK_TOKEN: token });
  t.match(post.out, /posted moment_\d+ \(public\)/);
  const feed = await run(["feed", "--json"], { FLOCK_TOKEN: token });
  t.equal(JSON.parse(feed.out).moments[0].content, "from the shell");
  t.equal((await run(["whoami"], { FLOCK_TOKEN: `am_${"x".repeat(43)}` })).code, 3, "unauthorized exits 3");
  t.equal((await run(["like", "moment_1"], { FLOCK_TOKEN: token })).code, 4, "not found exits 4");
  t.equal((await run(["bogus"])).code, 2, "usage exits 2");
});
