// The rolling upgrade's startup check (runtime/release-check.ts, runtime/release.ts): a node announces its release
// and refuses to start beside a live node it cannot mix with, or on a keyspace of a newer layout; both nodes of a
// pair that cannot mix, started at once, refuse. A live node that announced nothing is a node of 0.1.0.
import t from "tap";
import { MemoryNodes } from "../../runtime/engines/memory/nodes.ts";
import { LEASE_MS } from "../../runtime/node-lease.ts";
import { ANNOUNCE_WAIT_MS, checkRelease, ReleaseMismatch } from "../../runtime/release-check.ts";
import { cannotMix, FIRST_RELEASE, type NodeRelease, parseRelease, thisRelease } from "../../runtime/release.ts";

const log = { info: () => {} } as never;
const rel = (release: string, protocol: number, mixesWith: number, layout = 1): NodeRelease => ({
  release,
  protocol,
  mixesWith,
  layout,
});

t.test("thisRelease is package.json's version, protocol 2, mixing with 0.1.0's protocol 1", async (t) => {
  const mine = thisRelease();
  t.match(mine.release, /^\d+\.\d+\.\d+/);
  t.same(
    { protocol: mine.protocol, mixesWith: mine.mixesWith, layout: mine.layout },
    { protocol: 2, mixesWith: 1, layout: 1 },
  );
  t.equal(cannotMix(mine, FIRST_RELEASE), undefined, "this release runs beside 0.1.0");
});

t.test("cannotMix: both directions", async (t) => {
  t.equal(cannotMix(rel("0.2.0", 2, 1), rel("0.1.0", 1, 1)), undefined);
  t.match(
    cannotMix(rel("0.3.0", 3, 3), rel("0.2.0", 2, 1)),
    /0\.2\.0 \(protocol 2\).*0\.3\.0 runs only beside protocol 3/,
    "the new one cannot read the old",
  );
  t.match(
    cannotMix(rel("0.2.0", 2, 1), rel("0.3.0", 3, 3)),
    /runs 0\.3\.0, which runs only beside protocol 3/,
    "the old one started beside the new",
  );
  t.equal(cannotMix(rel("0.3.0", 3, 2), rel("0.2.0", 2, 1)), undefined);
});

t.test("parseRelease refuses what is not a release", async (t) => {
  t.same(parseRelease('{"release":"0.2.0","protocol":2,"mixesWith":1,"layout":1}'), rel("0.2.0", 2, 1));
  for (const s of [
    null,
    "",
    "{",
    '{"release":"x"}',
    '{"release":"x","protocol":0,"mixesWith":1,"layout":1}',
    '{"release":1,"protocol":2,"mixesWith":1,"layout":1}',
  ]) {
    t.equal(parseRelease(s), undefined, String(s));
  }
});

/** A node's lease on `nodes` as checkRelease uses it: its owner, and its announcement (no renewal timer here). */
function leaseOf(nodes: MemoryNodes, owner: string) {
  return { owner, announce: (release: string) => nodes.announce(owner, release, 1_000_000) };
}

const opts = (pauses: number[] = []) => ({
  now: () => 1_000_000,
  log,
  pause: async (ms: number) => void pauses.push(ms),
});

t.test("checkRelease: announces, then refuses beside a release it cannot mix with, naming it", async (t) => {
  const nodes = new MemoryNodes();
  const now = 1_000_000;
  await nodes.acquire("old", now, LEASE_MS, 1); // a 0.1.0 node: announces nothing
  await nodes.acquire("b", now, LEASE_MS, 2);
  const pauses: number[] = [];
  t.same(
    await checkRelease(nodes, leaseOf(nodes, "b"), rel("0.2.0", 2, 1), opts(pauses)),
    [FIRST_RELEASE],
    "0.2.0 starts beside 0.1.0",
  );
  t.same(pauses, [ANNOUNCE_WAIT_MS], "after giving the unannounced lease a moment to announce");
  await nodes.acquire("c", now, LEASE_MS, 3);
  const err = await checkRelease(nodes, leaseOf(nodes, "c"), rel("0.3.0", 3, 2), opts()).catch((e: unknown) => e);
  t.ok(err instanceof ReleaseMismatch, "0.3.0 (mixing only with protocol 2 on) refuses beside 0.1.0");
  t.match((err as Error).message, /a live node runs 0\.1\.0 \(protocol 1\)/);
  t.notMatch((err as Error).message, /0\.2\.0/, "the 0.2.0 node is not a conflict");
  // once the 0.1.0 node has stopped, it starts, with no pause (everyone live has announced)
  await nodes.release("old", 1);
  const none: number[] = [];
  t.same(await checkRelease(nodes, leaseOf(nodes, "c"), rel("0.3.0", 3, 2), opts(none)), [rel("0.2.0", 2, 1)]);
  t.same(none, []);
});

t.test(
  "checkRelease: a lease that announces during the pause is read as what it announced, not as 0.1.0",
  async (t) => {
    const nodes = new MemoryNodes();
    await nodes.acquire("late", 1_000_000, LEASE_MS, 1); // its lease is live; its announcement comes a moment later
    await nodes.acquire("me", 1_000_000, LEASE_MS, 2);
    const o = { ...opts(), pause: () => nodes.announce("late", JSON.stringify(rel("0.4.0", 4, 4)), 1_000_000) };
    await t.rejects(
      checkRelease(nodes, leaseOf(nodes, "me"), rel("0.2.0", 2, 1), o),
      /a live node runs 0\.4\.0, which runs only beside protocol 4 or later/,
    );
  },
);

t.test("checkRelease: two releases that cannot mix, started at once, both refuse", async (t) => {
  const nodes = new MemoryNodes();
  const now = 1_000_000;
  await nodes.acquire("x", now, LEASE_MS, 1);
  await nodes.acquire("y", now, LEASE_MS, 2);
  // x checks while y holds its lease but has not announced yet; y announces during x's pause, then checks
  let yChecked: Promise<unknown> | undefined;
  const o = {
    ...opts(),
    pause: async () =>
      void (yChecked = checkRelease(nodes, leaseOf(nodes, "y"), rel("0.4.0", 4, 4), opts()).catch((e: unknown) => e)),
  };
  await t.rejects(
    checkRelease(nodes, leaseOf(nodes, "x"), rel("0.2.0", 2, 1), o),
    ReleaseMismatch,
    "x saw y's announcement",
  );
  t.ok((await yChecked) instanceof ReleaseMismatch, "y saw x's");
});

t.test(
  "checkRelease: a keyspace of a newer layout is refused; an accepted node raises an older one, never lowers it",
  async (t) => {
    const nodes = new MemoryNodes();
    await nodes.acquire("n", 1_000_000, LEASE_MS, 1);
    await nodes.layout(2); // a newer release's node raised it to 2
    await t.rejects(
      checkRelease(nodes, leaseOf(nodes, "n"), rel("0.2.0", 2, 1, 1), opts()),
      /Redis holds keyspace layout 2, written by a newer release; 0\.2\.0 knows layout 1/,
    );
    t.equal(await nodes.layout(1), 2, "the refused node did not lower it");
    await checkRelease(nodes, leaseOf(nodes, "n"), rel("0.9.0", 9, 9, 3), opts());
    t.equal(await nodes.layout(1), 3, "an accepted node of layout 3 raised it");
  },
);
