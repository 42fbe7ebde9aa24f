// Which release this node is, and which releases it may run beside during a rolling upgrade. Nodes talk through Redis
// (pub/sub messages, shared records), so two releases run side by side only when each understands what the other
// writes. Each release states that here, and CHANGELOG.md says it in words:
// - PROTOCOL numbers the shapes nodes exchange (runtime/engines/node-channels.ts) and keep in Redis. It goes up by
//   one with every release that changes any of them, mixable or not.
// - MIXES_WITH is the oldest protocol this release runs beside, in both directions: it reads their messages and
//   records, and they read its (a change that only adds a field old nodes ignore keeps it; one that renames, removes
//   or reinterprets something raises it to PROTOCOL: "cannot run mixed").
// - LAYOUT numbers the layout of the Redis keyspace (the key names and record shapes of docs/ARCHITECTURE.md, "Redis
//   key layout"). It is kept in Redis, raised by each accepted node to its own; a node refuses a keyspace of a layout
//   newer than its own. A release that raises it cannot run mixed (its MIXES_WITH is its PROTOCOL).
// A starting node announces its release under its lease and refuses to start beside a live node it cannot mix with
// (runtime/release-check.ts). Nodes of 0.1.0, the first release, announce nothing: a live lease without an
// announcement is a 0.1.0 node (protocol 1).
import { readFileSync } from "node:fs";
import { projectPath } from "./paths.ts";

/** This release's node-to-node protocol: 1 was 0.1.0's (messages without a version); 2 adds `v` to each. */
export const PROTOCOL = 2;
/** The oldest protocol this release runs beside (0.1.0's: 2 only adds fields 0.1.0 ignores). */
export const MIXES_WITH = 1;
/** The Redis keyspace's layout: unchanged since 0.1.0. */
export const LAYOUT = 1;

/** What a node announces of itself in the node registry. */
export interface NodeRelease {
  /** The release (package.json's version). */
  release: string;
  protocol: number;
  mixesWith: number;
  layout: number;
}

/** What a live node that announced nothing is: a node of 0.1.0. */
export const FIRST_RELEASE: NodeRelease = { release: "0.1.0", protocol: 1, mixesWith: 1, layout: 1 };

let version: string | undefined;

/** This node's release. */
export function thisRelease(): NodeRelease {
  version ??= (JSON.parse(readFileSync(projectPath("package.json"), "utf8")) as { version: string }).version;
  return { release: version, protocol: PROTOCOL, mixesWith: MIXES_WITH, layout: LAYOUT };
}

/** A release as the registry stores it (JSON), or undefined when the text is not one. */
export function parseRelease(text: string | null | undefined): NodeRelease | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Partial<NodeRelease>;
    const int = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= 1;
    if (typeof v.release !== "string" || !int(v.protocol) || !int(v.mixesWith) || !int(v.layout)) return undefined;
    return { release: v.release, protocol: v.protocol!, mixesWith: v.mixesWith!, layout: v.layout! };
  } catch {
    return undefined;
  }
}

/** Why `mine` cannot run beside `other`, or undefined when it can. */
export function cannotMix(mine: NodeRelease, other: NodeRelease): string | undefined {
  if (other.protocol < mine.mixesWith) {
    return `a live node runs ${other.release} (protocol ${other.protocol}); ${mine.release} runs only beside protocol ${mine.mixesWith} or later`;
  }
  if (mine.protocol < other.mixesWith) {
    return `a live node runs ${other.release}, which runs only beside protocol ${other.mixesWith} or later; ${mine.release} speaks protocol ${mine.protocol}`;
  }
  return undefined;
}

/** Why a node of `mine` cannot use a Redis keyspace of `layout`, or undefined. */
export function cannotUseLayout(mine: NodeRelease, layout: number): string | undefined {
  return layout > mine.layout
    ? `Redis holds keyspace layout ${layout}, written by a newer release; ${mine.release} knows layout ${mine.layout}`
    : undefined;
}
