// A stream's messages after a number (StreamDelivery.readAfter, what a socket's gap fill reads): from the stream's
// Redis stream as far as it holds them without a hole, and from Postgres past that (trimmed, flushed, or an append
// that never ran). Both engines.
import t from "tap";
import { Redis } from "ioredis";
import { registerAgent } from "./helpers/http.ts";
import { inboxStream } from "../runtime/messaging/stream-id.ts";
import { TEST_REDIS_URL } from "./helpers/env.ts";
import { startTestNode } from "./helpers/node.ts";
import { sendOk } from "./messaging-helpers.ts";

for (const engine of ["redis", "memory"] as const) {
  t.test(`read after a number: the stream's own log, then Postgres (${engine})`, async (t) => {
    const node = await startTestNode(t, { engine });
    const streams = node.svc.hub.streams;
    const a = await registerAgent(node.url, "a");
    const b = await registerAgent(node.url, "b");
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(String((await sendOk(node.url, a, b.id, `m${i}`)).id).replace(/^msg_/, ""));
    const seqs = async (after: number) =>
      (await streams.readAfter(inboxStream(b.id), after, 100)).map((m) => [m.seq, m.id]);
    t.same(await seqs(0), [
      [1, ids[0]],
      [2, ids[1]],
      [3, ids[2]],
    ]);
    t.same(await seqs(2), [[3, ids[2]]]);

    // what the log holds is what is read: an entry of the log alone (never committed) shows it
    await node.svc.engines.streams.append(
      { key: inboxStream(b.id), seq: 4, id: "4", payload: '{"from the log":true}' },
      "test.none",
      "",
    );
    t.same(await seqs(3), [[4, "4"]], "read from the log");

    // a hole right after the number: Postgres, which has nothing past 3
    await node.svc.engines.streams.append({ key: inboxStream(b.id), seq: 9, id: "9", payload: "{}" }, "test.none", "");
    t.same(await seqs(4), [], "past a hole: Postgres");
    if (engine === "redis") {
      const redis = new Redis(TEST_REDIS_URL);
      t.teardown(() => redis.disconnect());
      t.equal(await redis.del(`${node.prefix}st:{${b.id}}`), 1);
      t.same(
        await seqs(1),
        [
          [2, ids[1]],
          [3, ids[2]],
        ],
        "a flushed log: Postgres",
      );
    }
  });
}
