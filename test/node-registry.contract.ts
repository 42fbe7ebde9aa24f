// The node registry contract (runtime/engines/nodes.ts): every implementation must pass it. Time is passed in.
import type { Test } from "tap";
import type { NodeRegistry } from "../runtime/engines/nodes.ts";
import { LEASE_MS } from "../runtime/node-lease.ts";

export function registryContract(t: Test, make: () => Promise<{ nodes: NodeRegistry; close: () => Promise<void> }>): void {
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
}
