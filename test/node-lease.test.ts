// Node ids stay unique among live nodes whatever restarts (issue 17, item 5), and an id clash never answers 500.
import { Redis } from "ioredis";
import t, { type Test } from "tap";
import { MemoryNodes } from "../runtime/engines/memory/nodes.ts";
import type { NodeRegistry } from "../runtime/engines/nodes.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { RedisNodes } from "../runtime/engines/redis/nodes.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { pending, sendOk } from "./messaging-helpers.ts";

const nodeBits = (raw: bigint) => Number((raw >> 12n) & 1023n);

function registryContract(t: Test, make: () => Promise<{ nodes: NodeRegistry; close: () => Promise<void> }>) {
  t.test("leases: one live holder per id; expired or released ids are free; a lost lease is not renewed", async (t) => {
    const { nodes, close } = await make();
    t.teardown(close);
    const now = 1_000_000;
    const a = await nodes.acquire("a", now, LEASE_MS, 7);
    const b = await nodes.acquire("b", now, LEASE_MS, 7);
    t.equal(a, 7);
    t.equal(b, 8, "the id after a held one");
    t.equal(await nodes.renew("a", 7, now + 1000, LEASE_MS), true);
    t.equal(await nodes.renew("b", 8, now + 1000, LEASE_MS), true);
    const ends = now + 1000 + LEASE_MS;
    t.equal(await nodes.acquire("c", ends - 1, LEASE_MS, 7), 9, "held until their leases end");
    t.equal(await nodes.acquire("d", ends + 1, LEASE_MS, 7), 7, "free once it ended");
    t.equal(await nodes.renew("a", 7, ends + 2, LEASE_MS), false, "the late renewal finds it taken");
    t.equal(await nodes.acquire("a", ends + 2, LEASE_MS, 7), 8, "and takes a free one");
    await nodes.release("d", 7);
    t.equal(await nodes.acquire("e", ends + 3, LEASE_MS, 7), 7, "a released id is free at once");
    t.equal(await nodes.renew("f", 500, now, LEASE_MS), true, "a lease nobody holds (lost with Redis) is taken back");
  });
}

t.test("memory registry", async (t) => {
  registryContract(t, async () => ({ nodes: new MemoryNodes(), close: async () => {} }));
});

t.test("redis registry", async (t) => {
  registryContract(t, async () => {
    const prefix = `flocktest:${uniqueName("nodes")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    return {
      nodes: new RedisNodes(defineScripts(cmd), redisKeys(prefix)),
      close: async () => {
        cmd.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});

t.test("two live nodes, their leases lost (Redis restarted empty), a new node takes one's id: all end distinct", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const idOf = (n: typeof one) => nodeBits(n.svc.ids.nextRaw());
  t.not(idOf(one), idOf(two), "distinct at start");
  await deletePrefix(`${one.prefix}nodes:`);
  // a node starting now: it tries first the id node one still holds, unaware
  const newcomer = await two.svc.engines.nodes.acquire("newcomer", Date.now(), LEASE_MS, idOf(one));
  t.equal(newcomer, idOf(one), "nobody holds it in Redis any more");
  await Promise.all([one.lease.renew(), two.lease.renew()]);
  const ids = [idOf(one), idOf(two), newcomer];
  t.equal(new Set(ids).size, 3, `distinct after one renewal: ${ids.join(", ")}`);
  t.equal(one.lease.id, idOf(one), "node one generates under its new id");
});

for (const engine of ["redis", "memory"] as const) {
  t.test(`a message id already taken is stored under a new one, not a 500 (${engine})`, async (t) => {
    const node = await startTestNode(t, { engine });
    const a = await registerAgent(node.url, "a");
    const b = await registerAgent(node.url, "b");
    const first = await sendOk(node.url, a, b.id, "first");
    const taken = BigInt(first.id.slice(4));
    const ids = node.svc.ids;
    const real = ids.nextRaw.bind(ids);
    let clashes = 1;
    ids.nextRaw = () => (clashes-- > 0 ? taken : real());
    const r = await call(node.url, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "second" } });
    t.equal(r.status, 201, "stored");
    t.not(r.body.id, first.id, "under a new id");
    t.same((await pending(node.url, b)).map((m) => [m.id, m.body]), [[first.id, "first"], [r.body.id, "second"]]);

    const g = await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id] } });
    t.equal(g.status, 201, g.text);
    const gm = await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "x" } });
    t.equal(gm.status, 201, gm.text);
    clashes = 1;
    ids.nextRaw = () => (clashes-- > 0 ? BigInt(gm.body.id.slice(4)) : real());
    const gm2 = await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "y" } });
    t.equal(gm2.status, 201, "a group message too");
    t.not(gm2.body.id, gm.body.id);
    ids.nextRaw = real;
  });
}
