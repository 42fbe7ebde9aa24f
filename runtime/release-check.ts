// The startup check of a rolling upgrade (runtime/release.ts): a node announces its release under its lease, then
// refuses to start beside a live node running a release it cannot run with, or on a Redis keyspace of a newer
// layout than it knows. It announces before it checks, so of two nodes of releases that cannot mix, started at
// once, the later to check sees the other's announcement; a live lease with no announcement yet (a node between
// its lease and its announcement, a few milliseconds) is read again after a pause before it counts as a node of
// 0.1.0. Once accepted, the node raises the keyspace's layout to its own, and its lease says both again at every
// renewal (runtime/node-lease.ts), so a Redis restart loses them for a renewal at most.
import { setTimeout as sleep } from "node:timers/promises";
import type { NodeRegistry } from "./engines/nodes.ts";
import type { Logger } from "./log.ts";
import type { NodeLease } from "./node-lease.ts";
import { cannotMix, cannotUseLayout, FIRST_RELEASE, type NodeRelease, parseRelease } from "./release.ts";

/** How long a live lease without an announcement is given to announce before it counts as a node of 0.1.0. */
export const ANNOUNCE_WAIT_MS = 300;

export class ReleaseMismatch extends Error {
  override readonly name = "ReleaseMismatch";
}

export interface ReleaseCheckOptions {
  now: () => number;
  log: Logger;
  /** The pause before a live lease without an announcement is read again (tests pass their own). */
  pause?: (ms: number) => Promise<unknown>;
}

/** The releases of the live nodes but `owner`: an unannounced lease is read again once, after ANNOUNCE_WAIT_MS. */
async function others(nodes: NodeRegistry, owner: string, o: ReleaseCheckOptions): Promise<NodeRelease[]> {
  let live = (await nodes.live(o.now())).filter((n) => n.owner !== owner);
  if (live.some((n) => n.announced === undefined)) {
    await (o.pause ?? sleep)(ANNOUNCE_WAIT_MS);
    live = (await nodes.live(o.now())).filter((n) => n.owner !== owner);
  }
  return live.map((n) => parseRelease(n.announced) ?? FIRST_RELEASE);
}

/**
 * Announce `mine` under `lease` and check it against every other live node and the keyspace; throws
 * ReleaseMismatch (naming each conflict) when it cannot run here. Answers the live releases it saw.
 */
export async function checkRelease(
  nodes: NodeRegistry,
  lease: Pick<NodeLease, "owner" | "announce">,
  mine: NodeRelease,
  o: ReleaseCheckOptions,
): Promise<NodeRelease[]> {
  await lease.announce(JSON.stringify(mine), mine.layout);
  const problems: string[] = [];
  const seen = await others(nodes, lease.owner, o);
  for (const other of seen) {
    const why = cannotMix(mine, other);
    if (why && !problems.includes(why)) problems.push(why);
  }
  // the layout is raised only by a node that may run here (raising it is what refuses older nodes from then on)
  if (problems.length === 0) {
    const layoutProblem = cannotUseLayout(mine, await nodes.layout(mine.layout));
    if (layoutProblem) problems.push(layoutProblem);
  }
  if (problems.length > 0) {
    throw new ReleaseMismatch(
      `this node (${mine.release}) cannot run beside what is running: ${problems.join("; ")}. ` +
        "Stop every node of the other release first (CHANGELOG.md says which releases cannot run mixed).",
    );
  }
  const releases = [...new Set(seen.map((s) => s.release))];
  if (releases.some((r) => r !== mine.release))
    o.log.info({ release: mine.release, beside: releases }, "running beside other releases (a rolling upgrade)");
  return seen;
}
