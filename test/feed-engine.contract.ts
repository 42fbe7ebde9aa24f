// The feed cache contract: every FeedCache implementation must pass it.
import type { Test } from "tap";
import type { FeedCache, PageRead, TimelineRead } from "../runtime/engines/feed.ts";
import type { MomentCache } from "../runtime/engines/moments.ts";

export interface FeedFixture {
  feed: FeedCache;
  /** The record cache the feed's pages are shown from. */
  moments: MomentCache;
  close(): Promise<void>;
}

/** Builds a cache keeping `depth` ids per timeline. */
export type FeedFactory = (depth: number) => Promise<FeedFixture>;

let n = 0;
const tl = (label: string) => `${label}-${process.pid}-${n++}`;

function hit(t: Test, r: TimelineRead | undefined): { floor: bigint; ids: bigint[] } {
  if (!r || !r.hit) {
    t.fail("expected a cached timeline");
    return { floor: -1n, ids: [] };
  }
  return { floor: r.floor, ids: r.ids };
}

function lease(t: Test, r: TimelineRead | undefined): string {
  if (!r || r.hit) {
    t.fail("expected a miss");
    return "";
  }
  return r.lease;
}

export function feedContract(t: Test, make: FeedFactory): void {
  const DEPTH = 5;
  let fx: FeedFixture;
  t.before(async () => {
    fx = await make(DEPTH);
  });
  t.teardown(async () => {
    await fx.close();
  });

  t.test("a new timeline misses with a lease; fill then read newest first, paged by before", async (t) => {
    const a = tl("fill");
    const [miss] = await fx.feed.read([a], null, 10);
    const l = lease(t, miss);
    t.equal(await fx.feed.fill(a, l, [30n, 10n, 20n], true), true);
    const all = hit(t, (await fx.feed.read([a], null, 10))[0]);
    t.same(all.ids, [30n, 20n, 10n]);
    t.equal(all.floor, 0n, "complete timeline");
    t.same(hit(t, (await fx.feed.read([a], null, 2))[0]).ids, [30n, 20n], "count");
    t.same(hit(t, (await fx.feed.read([a], 30n, 10))[0]).ids, [20n, 10n], "before is exclusive");
    t.same(hit(t, (await fx.feed.read([a], 25n, 1))[0]).ids, [20n]);
    t.same(hit(t, (await fx.feed.read([a], 10n, 10))[0]).ids, [], "nothing older");
    t.equal(fx.feed.depth, DEPTH);
  });

  t.test("an empty complete timeline is cached", async (t) => {
    const a = tl("empty");
    const l = lease(t, (await fx.feed.read([a], null, 3))[0]);
    t.equal(await fx.feed.fill(a, l, [], true), true);
    const r = hit(t, (await fx.feed.read([a], null, 3))[0]);
    t.same(r, { floor: 0n, ids: [] });
  });

  t.test("pushes skip timelines that are not cached", async (t) => {
    const a = tl("skip");
    await fx.feed.push([a], 5n);
    const l = lease(t, (await fx.feed.read([a], null, 3))[0]);
    t.ok(l, "still a miss after a push");
  });

  t.test("pushes made while a timeline is rebuilt survive the fill; duplicates collapse", async (t) => {
    const a = tl("rebuild");
    const l = lease(t, (await fx.feed.read([a], null, 10))[0]);
    await fx.feed.push([a], 40n);
    await fx.feed.push([a], 40n);
    t.equal(await fx.feed.fill(a, l, [20n, 10n], true), true);
    await fx.feed.push([a], 30n);
    await fx.feed.push([a], 30n);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]).ids, [40n, 30n, 20n, 10n]);
  });

  t.test("invalidate drops the timeline and revokes outstanding leases", async (t) => {
    const a = tl("inval");
    const l1 = lease(t, (await fx.feed.read([a], null, 10))[0]);
    await fx.feed.invalidate([a]);
    t.equal(await fx.feed.fill(a, l1, [1n], true), false, "a revoked lease installs nothing");
    const l2 = lease(t, (await fx.feed.read([a], null, 10))[0]);
    t.equal(await fx.feed.fill(a, l1, [1n], true), false, "still revoked after a new miss");
    t.equal(await fx.feed.fill(a, l2, [2n], true), true);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]).ids, [2n]);
    await fx.feed.invalidate([a]);
    lease(t, (await fx.feed.read([a], null, 10))[0]);
  });

  t.test("a lease is good once and only for its timeline", async (t) => {
    const a = tl("lease-a");
    const b = tl("lease-b");
    const la = lease(t, (await fx.feed.read([a], null, 10))[0]);
    const la2 = lease(t, (await fx.feed.read([a], null, 10))[0]);
    t.equal(await fx.feed.fill(b, la, [1n], true), false, "not b's lease");
    t.equal(await fx.feed.fill(a, la, [7n], true), true);
    t.equal(await fx.feed.fill(a, la2, [9n], true), false, "the first fill retired the other leases");
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]).ids, [7n]);
  });

  t.test("several timelines in one read keep their order and state", async (t) => {
    const a = tl("multi-a");
    const b = tl("multi-b");
    const la = lease(t, (await fx.feed.read([a], null, 10))[0]);
    await fx.feed.fill(a, la, [3n, 1n], true);
    const [ra, rb] = await fx.feed.read([a, b], 3n, 10);
    t.same(hit(t, ra).ids, [1n]);
    const lb = lease(t, rb);
    t.equal(await fx.feed.fill(b, lb, [2n], true), true);
    const [rb2, ra2] = await fx.feed.read([b, a], null, 1);
    t.same(hit(t, rb2).ids, [2n]);
    t.same(hit(t, ra2).ids, [3n]);
  });

  t.test("fills keep the depth newest; an incomplete fill has its lowest id as floor", async (t) => {
    const a = tl("depth");
    const la = lease(t, (await fx.feed.read([a], null, 10))[0]);
    t.equal(await fx.feed.fill(a, la, [100n, 90n, 80n, 70n, 60n], false), true);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]), { floor: 60n, ids: [100n, 90n, 80n, 70n, 60n] });

    const b = tl("depth-over");
    const lb = lease(t, (await fx.feed.read([b], null, 10))[0]);
    await fx.feed.fill(b, lb, [1n, 2n, 3n, 4n, 5n, 6n, 7n], true);
    t.same(
      hit(t, (await fx.feed.read([b], null, 10))[0]),
      { floor: 3n, ids: [7n, 6n, 5n, 4n, 3n] },
      "trimmed to depth",
    );
  });

  t.test("pushes past the depth trim the oldest and raise the floor", async (t) => {
    const a = tl("trim");
    const la = lease(t, (await fx.feed.read([a], null, 10))[0]);
    await fx.feed.fill(a, la, [10n, 20n, 30n], true);
    await fx.feed.push([a], 40n);
    await fx.feed.push([a], 50n);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]), { floor: 0n, ids: [50n, 40n, 30n, 20n, 10n] });
    await fx.feed.push([a], 60n);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]), { floor: 20n, ids: [60n, 50n, 40n, 30n, 20n] });
    await fx.feed.push([a], 5n);
    t.same(
      hit(t, (await fx.feed.read([a], null, 10))[0]),
      { floor: 20n, ids: [60n, 50n, 40n, 30n, 20n] },
      "a late old id falls off",
    );
  });

  t.test("remove drops ids from every named timeline", async (t) => {
    const a = tl("rm-a");
    const b = tl("rm-b");
    const [ra, rb] = await fx.feed.read([a, b], null, 10);
    await fx.feed.fill(a, lease(t, ra), [3n, 2n, 1n], true);
    await fx.feed.fill(b, lease(t, rb), [4n, 2n], true);
    await fx.feed.remove([a, b, tl("rm-none")], [2n, 9n]);
    const [a2, b2] = await fx.feed.read([a, b], null, 10);
    t.same(hit(t, a2).ids, [3n, 1n]);
    t.same(hit(t, b2).ids, [4n]);
  });

  t.test("ids order numerically across digit counts and up to 2^63-1", async (t) => {
    const a = tl("wide");
    const big = 2n ** 63n - 1n;
    const l = lease(t, (await fx.feed.read([a], null, 10))[0]);
    await fx.feed.fill(a, l, [9n, 10n, 999_999_999_999n, big], true);
    t.same(hit(t, (await fx.feed.read([a], null, 10))[0]).ids, [big, 999_999_999_999n, 10n, 9n]);
    t.same(hit(t, (await fx.feed.read([a], big, 2))[0]).ids, [999_999_999_999n, 10n]);
    t.same(hit(t, (await fx.feed.read([a], 10n, 2))[0]).ids, [9n]);
  });

  /** A record whose JSON head names the id, so pages can be checked by eye. */
  const rec = (id: bigint, likes = 0, rev = 0n) => ({ id, head: `{"id":"moment_${id}"`, likes, comments: 0, rev });
  const json = (id: bigint, likes = 0) => `{"id":"moment_${id}","like_count":${likes},"comment_count":0}`;
  const page = (t: Test, r: PageRead): { ids: bigint[]; moments: unknown } => {
    if (r.state !== "hit") {
      t.fail(`expected a page, got ${r.state}`);
      return { ids: [], moments: [] };
    }
    return { ids: r.ids, moments: r.moments };
  };

  t.test("readPage: a lease for each timeline not filled, null for the filled ones", async (t) => {
    const a = tl("page-miss-a");
    const b = tl("page-miss-b");
    const first = await fx.feed.readPage([a, b], null, 3, 2);
    t.equal(first.state, "miss");
    const leases = first.state === "miss" ? first.leases : [];
    t.equal(leases.length, 2);
    t.ok(leases.every((l) => typeof l === "string"));
    t.equal(await fx.feed.fill(a, leases[0]!, [1n], true), true, "the lease handed out fills");
    const second = await fx.feed.readPage([a, b], null, 3, 2);
    t.same(second.state === "miss" ? second.leases.map((l) => l === null) : [], [true, false]);
  });

  t.test("readPage merges newest first without duplicates, with each id's record", async (t) => {
    const a = tl("page-a");
    const b = tl("page-b");
    const [ra, rb] = await fx.feed.read([a, b], null, 1);
    await fx.feed.fill(a, lease(t, ra), [1001n, 1003n, 1005n], true);
    await fx.feed.fill(b, lease(t, rb), [1002n, 1003n, 1004n], true);
    const cold = page(t, await fx.feed.readPage([a, b], null, 4, 3));
    t.same(cold.ids, [1005n, 1004n, 1003n, 1002n]);
    t.same(cold.moments, [undefined, undefined, undefined, undefined], "no records cached yet");
    await fx.moments.store([rec(1005n, 2, 1n), rec(1004n), rec(1003n)]);
    t.same(page(t, await fx.feed.readPage([a, b], null, 4, 3)).moments, [
      json(1005n, 2),
      json(1004n),
      json(1003n),
      undefined,
    ]);
    await fx.moments.store([rec(1002n)]);
    const warm = await fx.feed.readPage([a, b], null, 4, 3);
    t.same(
      warm,
      { state: "shown", count: 4, json: [json(1005n, 2), json(1004n), json(1003n)].join(",") },
      "all cached: the shown ones joined",
    );
    t.same(page(t, await fx.feed.readPage([a, b], 1003n, 4, 3)), {
      ids: [1002n, 1001n],
      moments: [json(1002n), undefined],
    });
    await fx.moments.forget([1004n]);
    t.same(page(t, await fx.feed.readPage([a, b], null, 2, 2)).moments, [json(1005n, 2), null], "tombstoned: null");
  });

  t.test("readPage is deep when the timelines hold fewer ids than wanted above their floor", async (t) => {
    const a = tl("page-deep");
    const b = tl("page-deep-pub");
    const [ra, rb] = await fx.feed.read([a, b], null, 1);
    await fx.feed.fill(a, lease(t, ra), [2050n, 2040n, 2030n], false);
    await fx.feed.fill(b, lease(t, rb), [2045n, 2020n], true);
    t.same(page(t, await fx.feed.readPage([a, b], null, 3, 2)).ids, [2050n, 2045n, 2040n]);
    await fx.moments.store([rec(2050n), rec(2045n), rec(2040n), rec(2020n)]);
    t.same(await fx.feed.readPage([a, b], null, 3, 2), {
      state: "shown",
      count: 3,
      json: `${json(2050n)},${json(2045n)}`,
    });
    t.same((await fx.feed.readPage([a, b], null, 5, 4)).state, "deep", "2020 is below a's floor: Postgres decides");
    t.same(
      await fx.feed.readPage([b], null, 5, 4),
      { state: "shown", count: 2, json: `${json(2045n)},${json(2020n)}` },
      "a complete timeline is never deep",
    );
  });

  t.test("moment records: counts are a register by revision; tombstones stay", async (t) => {
    const m = 3001n;
    t.same(await fx.moments.get([m]), [undefined]);
    await fx.moments.counts([{ id: m, likes: 9, comments: 0, rev: 7n }]);
    t.same(await fx.moments.get([m]), [undefined], "counts alone are not a record");
    await fx.moments.store([rec(m, 5, 5n)]);
    t.same(await fx.moments.get([m]), [json(m, 9)], "a fill older than the counts keeps the newer counts");
    await fx.moments.counts([{ id: m, likes: 8, comments: 0, rev: 6n }]);
    t.same(await fx.moments.get([m]), [json(m, 9)], "older counts are ignored");
    await fx.moments.counts([{ id: m, likes: 10, comments: 0, rev: 8n }]);
    t.same(await fx.moments.get([m]), [json(m, 10)]);
    await fx.moments.forget([m, 3002n]);
    await fx.moments.store([rec(m, 11, 9n), rec(3002n)]);
    t.same(await fx.moments.get([m, 3002n, 3003n]), [null, null, undefined], "a later fill keeps the tombstone");
  });
}
