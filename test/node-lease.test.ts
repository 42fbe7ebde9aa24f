// Node ids stay unique among live nodes whatever restarts (issue 17, item 5), and an id clash never answers 500.
import { Redis } from "ioredis";
import t from "tap";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { RedisNodes } from "../runtime/engines/redis/nodes.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";
import { LAYOUT, PROTOCOL } from "../runtime/release.ts";
import { deletePrefix, startTestNode } from "./helpers/node.ts";
import { pending, sendOk } from "./messaging-helpers.ts";
import { registryContract } from "./node-registry.contract.ts";

const nodeBits = (raw: bigint) => Number((raw >> 12n) & 1023n);

// the registry contract on the memory engine: test/unit/node-registry-memory.test.ts
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

t.test(
  "two live nodes, their leases lost (Redis restarted empty), a new node takes one's id: all end distinct",
  async (t) => {
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
  },
);

t.test(
  "Redis restarted empty: at their next renewal the nodes announce their release and the layout again",
  async (t) => {
    const one = await startTestNode(t);
    const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
    const keys = redisKeys(one.prefix);
    const redis = new Redis(TEST_REDIS_URL);
    t.teardown(() => redis.disconnect());
    const announced = async () =>
      Object.values(await redis.hgetall(keys.nodeReleases())).map(
        (j) => (JSON.parse(j) as { protocol: number }).protocol,
      );
    t.same(await announced(), [PROTOCOL, PROTOCOL], "both announced at start");
    t.equal(await redis.get(keys.layout()), String(LAYOUT));
    await deletePrefix(`${one.prefix}nodes:`);
    t.same(await announced(), [], "gone with Redis");
    await Promise.all([one.lease.renew(), two.lease.renew()]);
    t.same(await announced(), [PROTOCOL, PROTOCOL], "said again by one renewal each");
    t.equal(await redis.get(keys.layout()), String(LAYOUT), "and the layout");
    t.same(
      (await two.svc.engines.nodes.live(Date.now())).map((n) => n.announced !== undefined),
      [true, true],
      "so neither reads as a node of 0.1.0",
    );
  },
);

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
    t.same(
      (await pending(node.url, b)).map((m) => [m.id, m.body]),
      [
        [first.id, "first"],
        [r.body.id, "second"],
      ],
    );

    const g = await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id] } });
    t.equal(g.status, 201, g.text);
    const gm = await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a.token,
      json: { body: "x" },
    });
    t.equal(gm.status, 201, gm.text);
    clashes = 1;
    ids.nextRaw = () => (clashes-- > 0 ? BigInt(gm.body.id.slice(4)) : real());
    const gm2 = await call(node.url, "POST", `/v1/groups/${g.body.group.id}/messages`, {
      token: a.token,
      json: { body: "y" },
    });
    t.equal(gm2.status, 201, "a group message too");
    t.not(gm2.body.id, gm.body.id);
    ids.nextRaw = real;
  });
}
