// Coalesced writes on the Redis command connection (runtime/engines/redis/coalesce.ts): commands issued in one
// event-loop turn reach the socket as one writev, their replies are unchanged, and a reconnected socket is
// coalesced too.
import type { Socket } from "node:net";
import { Redis } from "ioredis";
import t, { type Test } from "tap";
import { coalesceWrites } from "../runtime/engines/redis/coalesce.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";

/** Counts the socket-level writes (one per `_write` or `_writev` call) the client's current socket makes. */
function spyWrites(redis: Redis) {
  const sock = redis.stream as Socket & { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void };
  const seen = { writes: 0, chunks: 0 };
  const write = sock._write.bind(sock);
  const writev = sock._writev!.bind(sock);
  sock._write = (...a: unknown[]) => {
    seen.writes++;
    seen.chunks++;
    write(...a);
  };
  sock._writev = (chunks: unknown, cb: unknown) => {
    seen.writes++;
    seen.chunks += (chunks as unknown[]).length;
    writev(chunks, cb);
  };
  return seen;
}

async function connected(t: Test, coalesce: boolean): Promise<Redis> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  if (coalesce) coalesceWrites(redis);
  await redis.connect();
  await redis.ping();
  t.teardown(() => redis.disconnect());
  return redis;
}

t.test("fifty commands in one turn go out as one writev, replies in order", async (t) => {
  const key = `flocktest:${uniqueName("coalesce")}`;
  t.teardown(async () => {
    const r = new Redis(TEST_REDIS_URL);
    await r.del(key);
    r.disconnect();
  });
  const redis = await connected(t, true);
  const seen = spyWrites(redis);
  const replies = await Promise.all(Array.from({ length: 50 }, () => redis.incr(key)));
  t.same(
    replies,
    Array.from({ length: 50 }, (_, i) => i + 1),
    "each command answered, in order",
  );
  t.equal(seen.chunks, 50, "fifty commands written");
  t.equal(seen.writes, 1, "in one socket write");
});

t.test("without it each command is its own write (what the wrapper saves)", async (t) => {
  const redis = await connected(t, false);
  const seen = spyWrites(redis);
  await Promise.all(Array.from({ length: 20 }, () => redis.ping()));
  t.ok(seen.writes > 1, `${seen.writes} writes for 20 commands`);
});

t.test("a reconnected socket is coalesced too", async (t) => {
  const redis = await connected(t, true);
  const first = redis.stream;
  const ready = new Promise((resolve) => redis.once("ready", resolve));
  redis.disconnect(true);
  await ready;
  t.not(redis.stream, first, "a new socket");
  const seen = spyWrites(redis);
  t.same(await Promise.all(Array.from({ length: 10 }, () => redis.ping())), Array(10).fill("PONG"));
  t.equal(seen.writes, 1, "its commands of one turn in one write");
});
