// The node registry contract (runtime/engines/nodes.ts): every implementation must pass it. Time is passed in.
import type { Test } from "tap";
import type { NodeRegistry } from "../runtime/engines/nodes.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";

export function registryContract(
  t: Test,
  make: () => Promise<{ nodes: NodeRegistry; close: () => Promise<void> }>,
): void {
  t.test("leases: one live holder per id; expired or released ids are free; a lost lease is not renewed", async (t) => {
    const { nodes, close } = await make();
    t.teardown(close);
    const now = 1_000_000;
    const a = await nodes.acquire("a", now, LEASE_MS, 7);
    const b = await nodes.acquire("b", now, LEASE_MS, 7);
    t.equal(a, 7);
    t.equal(b, 8, "the id after a held one");
    t.equal(await nodes.renew("a", 7, now + 1000, LEASE_MS), true);
    t.equal(await nodes.renew("b", 8, now + 1000, LEASE_MS), true);
    const ends = now + 1000 + LEASE_MS;
    t.equal(await nodes.acquire("c", ends - 1, LEASE_MS, 7), 9, "held until their leases end");
    t.equal(await nodes.acquire("d", ends + 1, LEASE_MS, 7), 7, "free once it ended");
    t.equal(await nodes.renew("a", 7, ends + 2, LEASE_MS), false, "the late renewal finds it taken");
    t.equal(await nodes.acquire("a", ends + 2, LEASE_MS, 7), 8, "and takes a free one");
    await nodes.release("d", 7);
    t.equal(await nodes.acquire("e", ends + 3, LEASE_MS, 7), 7, "a released id is free at once");
    t.equal(await nodes.renew("f", 500, now, LEASE_MS), true, "a lease nobody holds (lost with Redis) is taken back");
  });

  t.test(
    "releases: live owners with what they announced; a released or ended lease is not live; the layout is stored once",
    async (t) => {
      const { nodes, close } = await make();
      t.teardown(close);
      const now = 2_000_000;
      await nodes.acquire("a", now, LEASE_MS, 20);
      await nodes.acquire("b", now, LEASE_MS, 21);
      await nodes.acquire("c", now, LEASE_MS, 22);
      await nodes.announce("a", '{"release":"0.2.0"}', now);
      const byOwner = async (at: number) =>
        Object.fromEntries((await nodes.live(at)).map((n) => [n.owner, n.announced]));
      t.same(
        await byOwner(now + 1),
        { a: '{"release":"0.2.0"}', b: undefined, c: undefined },
        "b and c announced nothing (0.1.0 nodes)",
      );
      await nodes.release("a", 20);
      t.same(await byOwner(now + 1), { b: undefined, c: undefined }, "a released lease is not live");
      await nodes.acquire("a2", now + 1, LEASE_MS, 20);
      await nodes.announce("a2", '{"release":"0.2.0"}', now + 1);
      t.same(await byOwner(now + LEASE_MS + 1), {}, "every lease has ended");
      await nodes.renew("b", 21, now + LEASE_MS + 2, LEASE_MS);
      t.same(await byOwner(now + LEASE_MS + 3), { b: undefined }, "b renewed, and announced nothing");
      // an announcement forgets those of ended leases; one renewed later is not announced again by itself (its node's
      // lease says it again at its next renewal: runtime/node-lease.ts)
      await nodes.announce("b", '{"release":"0.3.0"}', now + LEASE_MS + 3);
      await nodes.renew("a2", 20, now + LEASE_MS + 4, LEASE_MS);
      t.same(
        await byOwner(now + LEASE_MS + 5),
        { a2: undefined, b: '{"release":"0.3.0"}' },
        "a2's announcement went with its ended lease",
      );
      t.equal(await nodes.layout(1), 1, "the first node stores its layout");
      t.equal(await nodes.layout(2), 1, "a node of a newer layout reads the one before");
      t.equal(await nodes.layout(1), 2, "and raised it: an older node reads the newer one");
      t.equal(await nodes.layout(1), 2, "which it does not lower");
    },
  );
}
