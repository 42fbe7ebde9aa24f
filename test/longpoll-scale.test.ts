// 10,000 long polls waiting on one node, held open by a client in another process: the node keeps one
// wake-up subscription and no extra Redis connection however many wait, and a send wakes the right one.
import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import t from "tap";
import { hashToken, newToken } from "../runtime/tokens.ts";
import { TEST_REDIS_URL } from "./helpers/env.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

const N = Number(process.env["FLOCK_SCALE_WAITERS"] ?? 10_000);

// The client process: opens one raw HTTP connection per token and sends a long poll on each, and prints
// "got <index> <bytes of messages array>" for each answer that carries messages. A long poll that times out empty is
// sent again on its connection, and a connection that fails or closes is opened again (up to five times), as a long-polling
// client does: on a loaded machine, opening 10,000 can take longer than one poll's 30 s.
const CLIENT = `
const net = require("node:net");
const [port, ...tokens] = require("node:fs").readFileSync(0, "utf8").trim().split("\\n");
const open = (tok, i, tries = 0) => {
  const s = net.connect(Number(port), "127.0.0.1", () => poll());
  const poll = () => s.write("GET /v1/messages/pending?timeout=30 HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer " + tok + "\\r\\n\\r\\n");
  let buf = "";
  s.on("data", (d) => {
    buf += d;
    const body = buf.indexOf("{\\"messages\\":");
    if (body < 0 || !buf.endsWith("]}")) return;
    const json = buf.slice(body);
    buf = "";
    if (json === "{\\"messages\\":[]}") poll();
    else process.stdout.write("got " + i + " " + json.length + "\\n");
  });
  // a connection closed before its poll was answered (seen: 6 of 10,000 closed without an error, cause not found)
  // is opened again as well
  let again = false;
  const reopen = () => {
    if (again || tries >= 5) return;
    again = true;
    setTimeout(() => open(tok, i, tries + 1), 100);
  };
  s.on("error", reopen);
  s.on("close", reopen);
};
tokens.forEach(open);
`;

t.test(`${N} long polls wait on one node with O(1) Redis connections`, async (t) => {
  const node = await startTestNode(t, { env: { FLOCK_LIMITS_SCALE: "1000", PG_POOL: "8" } });
  const hub = node.svc.hub;
  const sql = node.svc.sql;
  const ids = Array.from({ length: N }, () => node.svc.ids.next("agent"));
  const tokens = ids.map(() => newToken("agent"));
  await sql`insert into principals (id, kind, display_name) select id, 'agent', 'waiter' from unnest(${ids}::text[]) as id`;
  await sql`insert into tokens (hash, principal) select decode(h, 'hex'), p from unnest(${tokens.map((x) => hashToken(x).toString("hex"))}::text[], ${ids}::text[]) as u(h, p)`;

  const redis = new Redis(TEST_REDIS_URL);
  t.teardown(() => redis.disconnect());
  const clients = async () => Number(/connected_clients:(\d+)/.exec(await redis.info("clients"))?.[1]);
  const clientsBefore = await clients();

  const child = spawn(process.execPath, ["-e", CLIENT], { stdio: ["pipe", "pipe", "inherit"] });
  t.teardown(() => child.kill());
  const answered = new Map<number, number>();
  let lines = "";
  child.stdout.on("data", (d: Buffer) => {
    lines += d.toString();
    const parts = lines.split("\n");
    lines = parts.pop()!;
    for (const l of parts) {
      const m = /^got (\d+) (\d+)$/.exec(l);
      if (m) answered.set(Number(m[1]), Number(m[2]));
    }
  });
  child.stdin.end([String(node.port), ...tokens].join("\n"));

  await until(() => hub.waiters.size >= N, 90_000).catch((err: Error) => {
    throw new Error(`${err.message}: ${hub.waiters.size} of ${N} long polls waiting`);
  });
  t.equal(hub.waiters.size, N, `${N} long polls waiting`);
  // every stream's messages, and so their wake-ups, come over one channel
  const [, subscribers] = (await redis.pubsub("NUMSUB", `${node.prefix}ch:stream.message`)) as [string, number];
  t.equal(Number(subscribers), 1, "one wake-up subscription for the whole node");
  const delta = (await clients()) - clientsBefore;
  t.ok(
    delta < 50,
    `Redis connections grew by ${delta} while ${N} long polls wait (other test processes share this Redis)`,
  );

  const sender = await registerAgent(node.url, "sender");
  const picks = [0, Math.floor(N / 3), Math.floor(N / 2), N - 1];
  for (const i of picks) {
    const started = performance.now();
    await sendOk(node.url, sender, ids[i]!, `for waiter ${i}`);
    await until(() => answered.has(i));
    t.ok(performance.now() - started < 1000, `waiter ${i} answered`);
    t.ok(answered.get(i)! > '{"messages":[]}'.length, `waiter ${i} got its message`);
  }
  t.equal(answered.size, picks.length, "nobody else was woken with an answer");
  t.equal(hub.waiters.size, N - picks.length);
});
