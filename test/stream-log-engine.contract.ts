// The stream log contract (runtime/engines/stream-log.ts): every implementation must pass it.
import type { Test } from "tap";
import type { PubSub } from "../runtime/engines/pubsub.ts";
import { until } from "./helpers/wait.ts";
import { type Published, STREAM_LOG_MAX, type StreamLog } from "../runtime/engines/stream-log.ts";
import { groupStream, type StreamId } from "../runtime/messaging/stream-id.ts";

export interface StreamLogFixture {
  engine: StreamLog;
  /** The pub/sub the engine announces on. */
  pubsub: PubSub;
  close(): Promise<void>;
}

let n = 0;
/** A stream of its own (a group's id no other test's stream has). */
const streamOf = (label: string) =>
  groupStream(BigInt(`${label.charCodeAt(0)}${process.pid}${Date.now() % 100000}${n++}`));
const msg = (key: StreamId, seq: number): Published => ({
  key,
  seq,
  id: String(1000 + seq),
  payload: `{"n":${seq},"text":"é ${seq}"}`,
});

export function streamLogContract(t: Test, make: () => Promise<StreamLogFixture>): void {
  let fx: StreamLogFixture;
  t.before(async () => {
    fx = await make();
  });
  t.teardown(async () => {
    await fx.close();
  });

  t.test(
    "an append is announced with its head, and read back above a number, in number order, each number once",
    async (t) => {
      const key = streamOf("s");
      const heard: string[] = [];
      const channel = `c.${key}`;
      const off = await fx.pubsub.subscribe(channel, (buf) => heard.push(buf.toString()));
      t.same(await fx.engine.after(key, 0), [], "a stream never appended to holds nothing");
      for (const seq of [2, 1, 3, 2]) await fx.engine.append(msg(key, seq), channel, `h${seq} `);
      t.same(await fx.engine.after(key, 0), [msg(key, 1), msg(key, 2), msg(key, 3)]);
      t.same(await fx.engine.after(key, 1), [msg(key, 2), msg(key, 3)]);
      t.same(await fx.engine.after(key, 3), []);
      await until(() => heard.length >= 4, { what: "four announcements" });
      t.same(
        heard,
        [2, 1, 3, 2].map((seq) => `h${seq} ${msg(key, seq).payload}`),
        "each append announced once, in order",
      );
      await off();
    },
  );

  t.test("a log keeps the newest STREAM_LOG_MAX messages; other streams are apart", async (t) => {
    const key = streamOf("s");
    const other = streamOf("o");
    await fx.engine.append(msg(other, 1), "c.none", "");
    for (let seq = 1; seq <= STREAM_LOG_MAX + 5; seq++) await fx.engine.append(msg(key, seq), "c.none", "");
    const got = await fx.engine.after(key, 0);
    t.equal(got.length, STREAM_LOG_MAX);
    t.equal(got[0]!.seq, 6, "the oldest five were trimmed: a reader past 0 sees the hole at 1");
    t.equal(got.at(-1)!.seq, STREAM_LOG_MAX + 5);
    t.same(await fx.engine.after(other, 0), [msg(other, 1)]);
  });

  t.test(
    "drop forgets a stream's log (an edit or delete made its payloads stale): readers go to Postgres",
    async (t) => {
      const key = streamOf("s");
      const other = streamOf("o");
      for (let seq = 1; seq <= 3; seq++) await fx.engine.append(msg(key, seq), "c.none", "");
      await fx.engine.append(msg(other, 1), "c.none", "");
      await fx.engine.drop(key);
      t.same(await fx.engine.after(key, 0), [], "nothing held");
      t.same(await fx.engine.after(other, 0), [msg(other, 1)], "another stream is untouched");
      await fx.engine.append(msg(key, 4), "c.none", "");
      t.same(
        await fx.engine.after(key, 0),
        [msg(key, 4)],
        "a later append starts it again: a reader below 3 sees the hole",
      );
      await fx.engine.drop(streamOf("never"));
      t.pass("dropping a stream that has no log is fine");
    },
  );
}
