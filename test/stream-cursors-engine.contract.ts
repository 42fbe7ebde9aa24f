// The remembered stream cursors contract (runtime/engines/stream-cursors.ts): every implementation must pass it. A
// cursor is named by its member and its stream's thread id (0: the inbox; a group's id).
import type { Test } from "tap";
import type { StreamCursorCache } from "../runtime/engines/stream-cursors.ts";
import { INBOX_THREAD } from "../runtime/messaging/stream-id.ts";

export interface StreamCursorsFixture {
  engine: StreamCursorCache;
  close(): Promise<void>;
}

let n = 0;
const who = (label: string) => `${label}${process.pid}${Date.now() % 100000}${n++}`;

export function streamCursorsContract(t: Test, make: () => Promise<StreamCursorsFixture>): void {
  let fx: StreamCursorsFixture;
  let gc: StreamCursorCache;
  t.before(async () => {
    fx = await make();
    gc = fx.engine;
  });
  t.teardown(async () => {
    await fx.close();
  });

  t.test("nothing remembered reads as missing; a merge keeps the larger cursor and the acks above it", async (t) => {
    const m = who("m");
    t.same([...(await gc.read(m, [1n, 2n]))], []);
    await gc.merge([{ member: m, thread: 1n, acked: 3, above: [] }]);
    await gc.merge([{ member: m, thread: 1n, acked: 2, above: [5] }]); // an older state, written late: 3 stays; 5 is kept above it
    t.same([...(await gc.read(m, [1n, 2n]))], [[1n, { acked: 3, above: [5] }]]);
    await gc.merge([{ member: m, thread: 1n, acked: 3, above: [7] }]);
    t.same((await gc.read(m, [1n])).get(1n), { acked: 3, above: [5, 7] }, "acks above gather");
    await gc.merge([{ member: m, thread: 1n, acked: 5, above: [] }]);
    t.same((await gc.read(m, [1n])).get(1n), { acked: 5, above: [7] }, "what the cursor reaches leaves the acks above");
  });

  t.test("one call records many members' cursors", async (t) => {
    const [a, b] = [who("a"), who("b")];
    await gc.merge([
      { member: a, thread: 1n, acked: 2, above: [] },
      { member: b, thread: 1n, acked: 7, above: [9] },
      { member: a, thread: 2n, acked: 1, above: [], ifAbsent: true },
      { member: a, thread: INBOX_THREAD, acked: 4, above: [6] },
    ]);
    t.same(
      [...(await gc.read(a, [INBOX_THREAD, 1n, 2n]))],
      [
        [INBOX_THREAD, { acked: 4, above: [6] }],
        [1n, { acked: 2, above: [] }],
        [2n, { acked: 1, above: [] }],
      ],
      "a member's inbox and groups, each its own cursor",
    );
    t.same((await gc.read(b, [1n])).get(1n), { acked: 7, above: [9] });
  });

  t.test("a seed writes only where nothing is remembered", async (t) => {
    const m = who("s");
    await gc.merge([{ member: m, thread: 9n, acked: 4, above: [6], ifAbsent: true }]);
    t.same((await gc.read(m, [9n])).get(9n), { acked: 4, above: [6] });
    await gc.merge([{ member: m, thread: 9n, acked: 1, above: [], ifAbsent: true }]);
    t.same((await gc.read(m, [9n])).get(9n), { acked: 4, above: [6] }, "a seed from an older read changes nothing");
    await gc.merge([{ member: m, thread: 9n, acked: 8, above: [] }]);
    t.same((await gc.read(m, [9n])).get(9n), { acked: 8, above: [] });
    t.same([...(await gc.read(who("other"), [9n]))], [], "members are apart");
  });
}
