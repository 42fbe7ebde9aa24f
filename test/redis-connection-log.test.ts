// A Redis outage is one structured line when the connection goes down and one when it comes back, not ioredis's
// "Unhandled error event" stack per failed reconnect.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { Writable } from "node:stream";
import t from "tap";
import pino from "pino";
import { createRedisEngines } from "../runtime/engines/redis/index.ts";
import { PrivateRedis } from "./helpers/private-servers.ts";
import { until } from "./helpers/wait.ts";

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
  // every connection attempt this process makes to the killed port, seen failing (a reconnect of either client)
  let refused = 0;
  const attempts = (m: unknown) => {
    (m as { socket: Socket }).socket.once("error", (err: NodeJS.ErrnoException & { port?: number }) => {
      if (err.port === redis.port) refused++;
    });
  };
  subscribe("net.client.socket", attempts);
  t.teardown(() => unsubscribe("net.client.socket", attempts));
  await redis.kill();
  await t.rejects(engines.ping());
  // many reconnect attempts fail while it is down (every 50-250 ms): a few of each client's
  await until(() => refused >= 6, { ms: 10_000, what: "six failed reconnect attempts" });
  await redis.restart();
  await until(() => lines.filter((l) => l.msg === "redis connection restored").length >= 2, {
    ms: 5000,
    what: "both connections restored",
  });
  await engines.ping();
  const changes = lines
    .filter((l) => /redis connection/.test(l.msg))
    .map((l) => `${l.redis} ${l.msg}`)
    .sort();
  t.same(changes, [
    "flock-cmd redis connection lost; reconnecting",
    "flock-cmd redis connection restored",
    "flock-sub redis connection lost; reconnecting",
    "flock-sub redis connection restored",
  ]);
  t.same(
    stderr.filter((s) => /Unhandled error event/.test(s)),
    [],
    "no unhandled error events",
  );
});
