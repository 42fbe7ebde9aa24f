import { Redis } from "ioredis";
import t, { type Test } from "tap";
import { MemoryMailboxes } from "../runtime/engines/memory/mailbox.ts";
import { MemoryPubSub } from "../runtime/engines/memory/pubsub.ts";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { ackSlot, RedisMailboxes, type RedisMailboxOptions } from "../runtime/engines/redis/mailbox.ts";
import { RedisPubSub } from "../runtime/engines/redis/pubsub.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { CONTRACT_CAPACITY, mailboxContract } from "./mailbox-engine.contract.ts";

/** A Redis mailbox engine under a key prefix of its own and its command connection; closed and cleaned up after `t`. */
function redisMailboxes(t: Test, name: string, opts: RedisMailboxOptions) {
  const prefix = `flocktest:${uniqueName(name)}:`;
  const cmd = new Redis(TEST_REDIS_URL);
  const sub = new Redis(TEST_REDIS_URL);
  const keys = redisKeys(prefix);
  const mb = new RedisMailboxes(defineScripts(cmd), keys, new RedisPubSub(cmd, sub, keys), opts);
  t.teardown(async () => {
    cmd.disconnect();
    sub.disconnect();
    await deletePrefix(prefix);
  });
  return { mb, cmd, keys };
}

t.test("memory engine", async (t) => {
  mailboxContract(t, async () => ({
    engine: new MemoryMailboxes(new MemoryPubSub(), CONTRACT_CAPACITY),
    close: async () => {},
  }));
});

t.test("redis engine", async (t) => {
  mailboxContract(t, async () => {
    const prefix = `flocktest:${uniqueName("mb")}:`;
    const cmd = new Redis(TEST_REDIS_URL);
    const sub = new Redis(TEST_REDIS_URL);
    const keys = redisKeys(prefix);
    const engine = new RedisMailboxes(defineScripts(cmd), keys, new RedisPubSub(cmd, sub, keys), {
      capacity: CONTRACT_CAPACITY,
    });
    return {
      engine,
      close: async () => {
        cmd.disconnect();
        sub.disconnect();
        await deletePrefix(prefix);
      },
    };
  });
});

t.test("redis: both keys of a mailbox always carry one expiry; appends to a built mailbox leave it alone", async (t) => {
  const ttlMs = 60_000;
  const { mb, cmd, keys } = redisMailboxes(t, "mbttl", { capacity: 4, ttlMs });
  const expiries = async (p: string) => Promise.all([cmd.pexpiretime(keys.mailbox(p)), cmd.pexpiretime(keys.mailboxIndex(p))]);

  // not built yet: each append sets the expiry of both keys
  await mb.append([{ principal: "early", id: "1", payload: "{}" }]);
  const [s1, i1] = await expiries("early");
  // the two PEXPIREs of one script can land a millisecond apart
  t.ok(s1 > Date.now() && Math.abs(s1 - i1) <= 5, "an append to a mailbox not built yet sets one expiry on both keys");

  await mb.seed("built", [{ id: "1", payload: "{}", deliveryCount: 0 }], true);
  const [seeded, seededIx] = await expiries("built");
  t.ok(seeded > Date.now() + ttlMs - 5_000 && Math.abs(seeded - seededIx) <= 5, "a seed sets one expiry on both keys");
  await cmd.pexpire(keys.mailbox("built"), 30_000);
  await cmd.pexpire(keys.mailboxIndex("built"), 30_000);
  const before = await expiries("built");
  await mb.append([{ principal: "built", id: "2", payload: "{}" }]);
  await mb.fetch("built", 10, null);
  await mb.ack("built", "1");
  t.same(await expiries("built"), before, "appends, fetches and acks do not move it");
});

t.test("redis: an index whose stream was evicted apart is rebuilt, not read as an empty mailbox", async (t) => {
  const { mb, cmd, keys } = redisMailboxes(t, "mbevict", { capacity: 4 });
  await mb.seed("p", [{ id: "1", payload: "{}", deliveryCount: 0 }], true);
  t.same((await mb.fetch("p", 10, null))?.map((e) => e.id), ["1"]);
  await cmd.del(keys.mailbox("p"));
  t.equal(await mb.fetch("p", 10, null), null, "seed again");

  // the same eviction followed by an append: the new stream gets an expiry, and the mailbox is rebuilt, not read
  // as holding only what came after the eviction
  await mb.seed("q", [{ id: "1", payload: "{}", deliveryCount: 0 }], true);
  await cmd.del(keys.mailbox("q"));
  await mb.append([{ principal: "q", id: "2", payload: "{}" }]);
  t.ok((await cmd.pexpiretime(keys.mailbox("q"))) > Date.now(), "the stream the append made expires");
  t.ok((await cmd.pexpiretime(keys.mailboxIndex("q"))) > Date.now(), "so does its index");
  t.equal(await mb.fetch("q", 10, null), null, "seed again (Postgres has message 1)");
  await mb.seed("q", [{ id: "1", payload: "{}", deliveryCount: 0 }], true);
  t.same((await mb.fetch("q", 10, null))?.map((e) => e.id), ["1", "2"], "the rebuild merges what was appended meanwhile");
});

t.test("ackSlot: slots as long as the ack memory, three sets taking turns, each expiring a whole slot before its next turn", async (t) => {
  const W = 60_000;
  t.same(ackSlot(0, W), { turn: 0, expireMs: 2 * W });
  t.same(ackSlot(W - 1, W), { turn: 0, expireMs: W + 1 });
  t.same(ackSlot(W, W), { turn: 1, expireMs: 2 * W });
  t.same(ackSlot(2 * W + 5, W), { turn: 2, expireMs: 2 * W - 5 });
  t.same(ackSlot(5 * W + 123, W), { turn: 2, expireMs: 2 * W - 123 });
  t.same(ackSlot(6 * W, W).turn, 0, "the turns come round every three slots");
  t.same(ackSlot(1.5, 1000).expireMs, 1999, "a whole number of ms for PEXPIRE");
  for (const now of [0, 1, W / 2, W - 1, 7 * W + 1, 1_795_645_737_000]) {
    const { expireMs } = ackSlot(now, W);
    const slotStart = Math.floor(now / W) * W;
    t.equal(now + expireMs, slotStart + 2 * W, `at ${now} its set expires at the end of the next slot`);
    t.ok(expireMs > W, `at ${now} so a tombstone lives more than one slot, and the set is gone a slot before its next turn`);
  }
});

t.test("redis: ack tombstones in three sets taking turns, remembered at least the ack memory, never trimmed", async (t) => {
  const W = 60_000;
  let now = 9 * W + W - 5; // five ms before slot 9 ends (turn 0): the next ack falls in the next set
  const { mb, cmd, keys } = redisMailboxes(t, "mbtomb", { capacity: 4, ackMemoryMs: W, now: () => now });
  await mb.seed("p", [1, 2, 3, 4].map((i) => ({ id: String(i), payload: "{}", deliveryCount: 0 })), true);
  t.equal(await mb.ack("p", "1"), true);
  now += 10; // slot 10, turn 1
  t.equal(await mb.ack("p", "2"), true);
  now += W; // slot 11, turn 2
  t.equal(await mb.ack("p", "3"), true);
  t.same(await cmd.smembers(keys.mailboxAcked("p", 0)), ["1"], "slot 9's ack went into set 0");
  t.same(await cmd.smembers(keys.mailboxAcked("p", 1)), ["2"], "slot 10's into set 1");
  t.same(await cmd.smembers(keys.mailboxAcked("p", 2)), ["3"], "slot 11's into set 2");
  // read in real time right after the acks (well under the second the bounds allow)
  const ttl0 = await cmd.pttl(keys.mailboxAcked("p", 0));
  const ttl2 = await cmd.pttl(keys.mailboxAcked("p", 2));
  t.ok(ttl0 > 0 && ttl0 <= W + 5, `set 0 expires at the end of the slot after its own (${ttl0} ms)`);
  t.ok(ttl2 > 2 * W - 1000 - 5 && ttl2 <= 2 * W - 5, `set 2 two slots from its slot's start (${ttl2} ms)`);

  // all three are read: neither a late append nor a rebuild from rows read before the acks brings them back
  const late = ["1", "2", "3"].map((id) => ({ principal: "p", id, payload: "{}" }));
  await mb.append(late);
  t.same((await mb.fetch("p", 10, null))?.map((e) => e.id), ["4"], "a late append leaves all three out");
  await mb.clear("p");
  await mb.seed("p", [1, 2, 3, 4].map((i) => ({ id: String(i), payload: "{}", deliveryCount: 1 })), true);
  t.same((await mb.fetch("p", 10, null))?.map((e) => e.id), ["4"], "so does a rebuild from rows read before the acks");
});

t.test("wake-ups: each principal with its message; the earlier form (principals alone) still reads", async (t) => {
  const { appendWake, readWake } = await import("../runtime/engines/wake.ts");
  const read = (text: string) => {
    const out: [string, string | null][] = [];
    readWake(text, (p, id) => out.push([p, id]));
    return out;
  };
  const text = appendWake([
    { principal: "1", id: "31" },
    { principal: "P2", id: "31" },
    { principal: "P2", id: "32" },
  ]);
  t.same(read(text), [
    ["1", "31"],
    ["P2", "31"],
    ["P2", "32"],
  ]);
  t.same(read("1,P2"), [
    ["1", null],
    ["P2", null],
  ], "a list of principals (a clear, or a node of the earlier form) names no message");
  const oldReader = text.split(",").filter((p) => !p.startsWith(":"));
  t.same(oldReader, ["1", "P2", "P2"], "a node of the earlier form, splitting on commas, still finds every principal");
});
