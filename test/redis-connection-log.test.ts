// A Redis outage is one structured line when the connection goes down and one when it comes back, not ioredis's
// "Unhandled error event" stack per failed reconnect.
import t from "tap";
import { Writable } from "node:stream";
import pino from "pino";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";

t.test("an outage logs one line down and one line up per connection, and nothing unhandled", async (t) => {
  const redis = await PrivateRedis.start(t);
  const lines: { msg: string; redis?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l) as { msg: string });
      cb();
    },
  });
  const log = pino({ level: "info" }, sink);
  const stderr: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr.push(chunk.toString());
    return true;
  }) as typeof process.stderr.write;
  t.teardown(() => {
    process.stderr.write = write;
  });
  const engines = await createRedisEngines(redis.url, "flocktest:connlog:", log);
  t.teardown(() => engines.close());
  await redis.kill();
  // many reconnect attempts fail while it is down (every 50-250 ms)
  await t.rejects(engines.ping());
  await new Promise((r) => setTimeout(r, 1500));
  await redis.restart();
  for (let i = 0; i < 100 && lines.filter((l) => l.msg === "redis connection restored").length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await engines.ping();
  const changes = lines.filter((l) => /redis connection/.test(l.msg)).map((l) => `${l.redis} ${l.msg}`).sort();
  t.same(changes, [
    "flock-cmd redis connection lost; reconnecting",
    "flock-cmd redis connection restored",
    "flock-sub redis connection lost; reconnecting",
    "flock-sub redis connection restored",
  ]);
  t.same(stderr.filter((s) => /Unhandled error event/.test(s)), [], "no unhandled error events");
});
