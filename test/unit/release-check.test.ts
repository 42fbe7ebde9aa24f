// The rolling upgrade's startup check (runtime/release-check.ts, runtime/release.ts): a node announces its release
// and refuses to start beside a live node it cannot mix with, or on a keyspace of a newer layout; both nodes of a
// pair that cannot mix, started at once, refuse. A live node that announced nothing is a node of 0.1.0.
import t from "tap";
import { MemoryNodes } from "../../runtime/engines/memory/nodes.ts";
import { LEASE_MS } from "../../runtime/node-lease.ts";
import { checkRelease, ReleaseMismatch } from "../../runtime/release-check.ts";
import { cannotMix, FIRST_RELEASE, type NodeRelease, parseRelease, thisRelease } from "../../runtime/release.ts";

const log = { info: () => {} } as never;
const rel = (release: string, protocol: number, mixesWith: number, layout = 1): NodeRelease => ({ release, protocol, mixesWith, layout });

t.test("thisRelease is package.json's version, protocol 2, mixing with 0.1.0's protocol 1", async (t) => {
  const mine = thisRelease();
  t.match(mine.release, /^\d+\.\d+\.\d+/);
  t.same({ protocol: mine.protocol, mixesWith: mine.mixesWith, layout: mine.layout }, { protocol: 2, mixesWith: 1, layout: 1 });
  t.equal(cannotMix(mine, FIRST_RELEASE), undefined, "this release runs beside 0.1.0");
});

t.test("cannotMix: both directions", async (t) => {
  t.equal(cannotMix(rel("0.2.0", 2, 1), rel("0.1.0", 1, 1)), undefined);
  t.match(cannotMix(rel("0.3.0", 3, 3), rel("0.2.0", 2, 1)), /0\.2\.0 \(protocol 2\).*0\.3\.0 runs only beside protocol 3/, "the new one cannot read the old");
  t.match(cannotMix(rel("0.2.0", 2, 1), rel("0.3.0", 3, 3)), /runs 0\.3\.0, which runs only beside protocol 3/, "the old one started beside the new");
  t.equal(cannotMix(rel("0.3.0", 3, 2), rel("0.2.0", 2, 1)), undefined);
});

t.test("parseRelease refuses what is not a release", async (t) => {
  t.same(parseRelease('{"release":"0.2.0","protocol":2,"mixesWith":1,"layout":1}'), rel("0.2.0", 2, 1));
  for (const s of [null, "", "{", '{"release":"x"}', '{"release":"x","protocol":0,"mixesWith":1,"layout":1}', '{"release":1,"protocol":2,"mixesWith":1,"layout":1}']) {
    t.equal(parseRelease(s), undefined, String(s));
  }
});

t.test("checkRelease: announces, then refuses beside a release it cannot mix with, naming it", async (t) => {
  const nodes = new MemoryNodes();
  const now = 1_000_000;
  await nodes.acquire("old", now, LEASE_MS, 1); // a 0.1.0 node: announces nothing
  await nodes.acquire("b", now, LEASE_MS, 2);
  t.same(await checkRelease(nodes, "b", rel("0.2.0", 2, 1), now, log), [FIRST_RELEASE], "0.2.0 starts beside 0.1.0");
  await nodes.acquire("c", now, LEASE_MS, 3);
  const err = await checkRelease(nodes, "c", rel("0.3.0", 3, 2), now, log).catch((e: unknown) => e);
  t.ok(err instanceof ReleaseMismatch, "0.3.0 (mixing only with protocol 2 on) refuses beside 0.1.0");
  t.match((err as Error).message, /a live node runs 0\.1\.0 \(protocol 1\)/);
  t.notMatch((err as Error).message, /0\.2\.0/, "the 0.2.0 node is not a conflict");
  // once the 0.1.0 node has stopped, it starts
  await nodes.release("old", 1);
  t.same(await checkRelease(nodes, "c", rel("0.3.0", 3, 2), now + 1, log), [rel("0.2.0", 2, 1)]);
});

t.test("checkRelease: two releases that cannot mix, started at once, both refuse", async (t) => {
  const nodes = new MemoryNodes();
  const now = 1_000_000;
  await nodes.acquire("x", now, LEASE_MS, 1);
  await nodes.acquire("y", now, LEASE_MS, 2);
  // both announce before either checks
  const [a, b] = await Promise.allSettled([checkRelease(nodes, "x", rel("0.2.0", 2, 1), now, log), checkRelease(nodes, "y", rel("0.4.0", 4, 4), now, log)]);
  t.equal(a.status, "rejected");
  t.equal(b.status, "rejected");
});

t.test("checkRelease: a keyspace of a newer layout is refused", async (t) => {
  const nodes = new MemoryNodes();
  await nodes.acquire("n", 1, LEASE_MS, 1);
  await nodes.layout(2); // a newer release's node stored layout 2
  await t.rejects(checkRelease(nodes, "n", rel("0.2.0", 2, 1, 1), 1, log), /Redis holds keyspace layout 2, written by a newer release; 0\.2\.0 knows layout 1/);
});
