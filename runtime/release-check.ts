// The startup check of a rolling upgrade (runtime/release.ts): a node announces its release under its lease, then
// refuses to start when the Redis keyspace is of a newer layout than it knows, or when a live node runs a release it
// cannot run beside. Announcing first means two nodes of releases that cannot mix, started at once, both see the
// other: both refuse, rather than both start.
import type { NodeRegistry } from "./engines/nodes.ts";
import type { Logger } from "./log.ts";
import { cannotMix, cannotUseLayout, FIRST_RELEASE, type NodeRelease, parseRelease } from "./release.ts";

export class ReleaseMismatch extends Error {
  override readonly name = "ReleaseMismatch";
}

/**
 * Announce `mine` for `owner` and check it against the keyspace and every other live node; throws ReleaseMismatch
 * (naming each conflict) when it cannot run here. Answers the live releases it saw (for the log).
 */
export async function checkRelease(nodes: NodeRegistry, owner: string, mine: NodeRelease, nowMs: number, log: Logger): Promise<NodeRelease[]> {
  await nodes.announce(owner, JSON.stringify(mine), nowMs);
  const problems: string[] = [];
  const layoutProblem = cannotUseLayout(mine, await nodes.layout(mine.layout));
  if (layoutProblem) problems.push(layoutProblem);
  const others = (await nodes.live(nowMs)).filter((n) => n.owner !== owner).map((n) => parseRelease(n.announced) ?? FIRST_RELEASE);
  for (const other of others) {
    const why = cannotMix(mine, other);
    if (why && !problems.includes(why)) problems.push(why);
  }
  if (problems.length > 0) {
    throw new ReleaseMismatch(
      `this node (${mine.release}) cannot run beside what is running: ${problems.join("; ")}. ` +
        "Stop every node of the other release first (CHANGELOG.md says which releases cannot run mixed).",
    );
  }
  const releases = [...new Set(others.map((o) => o.release))];
  if (releases.some((r) => r !== mine.release)) log.info({ release: mine.release, beside: releases }, "running beside other releases (a rolling upgrade)");
  return others;
}
