// The remembered group cursors contract (runtime/engines/group-cursors.ts): every implementation must pass it.
import type { Test } from "tap";
import type { GroupCursorCache } from "../runtime/engines/group-cursors.ts";

export interface GroupCursorsFixture {
  engine: GroupCursorCache;
  close(): Promise<void>;
}

let n = 0;
const who = (label: string) => `${label}${process.pid}${Date.now() % 100000}${n++}`;

export function groupCursorsContract(t: Test, make: () => Promise<GroupCursorsFixture>): void {
  let fx: GroupCursorsFixture;
  let gc: GroupCursorCache;
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
    ]);
    t.same(
      [...(await gc.read(a, [1n, 2n]))],
      [
        [1n, { acked: 2, above: [] }],
        [2n, { acked: 1, above: [] }],
      ],
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
