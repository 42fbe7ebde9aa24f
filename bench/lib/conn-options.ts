// The connections scenario's command line (`npm run bench -- --scenario connections [--mode one|six|all] [--count N]
// [--clients K] [--width W]`): which modes run, how many sockets each holds, over how many client processes.
import { parseArgs } from "node:util";

export type Mode = "one" | "six";

/** What each mode holds by default: one full node (18,000, under the 20,000 open files a process may have here), and six nodes. */
export const MODES: Record<Mode, { nodes: number; count: number; clients: number; big: number }> = {
  one: { nodes: 1, count: 18_000, clients: 3, big: 0 },
  six: { nodes: 6, count: 100_000, clients: 6, big: 10_000 },
};

/** Most sockets one client process holds (its open-file limit is 20,000, and it needs a few files of its own). */
export const PER_CLIENT_MAX = 19_000;

export interface ModeOptions {
  mode: Mode;
  nodes: number;
  count: number;
  clients: number;
  /** connects in flight at once per client process */
  width: number;
  /** members of the big group (its owner, a tenth polling, the rest on sockets already open); 0: no big group */
  big: number;
}

export function connectionsOptions(argv: string[]): ModeOptions[] {
  const { values: a } = parseArgs({
    args: argv,
    options: {
      scenario: { type: "string" },
      mode: { type: "string", default: "all" },
      count: { type: "string" },
      clients: { type: "string" },
      width: { type: "string", default: "100" },
      big: { type: "string" },
    },
  });
  const modes: Mode[] = a.mode === "all" ? ["one", "six"] : a.mode === "one" || a.mode === "six" ? [a.mode] : [];
  if (modes.length === 0) throw new Error(`--mode is one, six or all (got ${a.mode})`);
  const whole = (name: string, v: string | undefined, d: number) => {
    const n = v === undefined ? d : Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1 (got ${v})`);
    return n;
  };
  return modes.map((mode) => {
    const m = MODES[mode];
    const count = whole("count", a.count, m.count);
    const clients = Math.max(whole("clients", a.clients, m.clients), Math.ceil(count / PER_CLIENT_MAX));
    const big = a.big === undefined ? m.big : a.big === "0" ? 0 : whole("big", a.big, 0);
    if (big > 0 && (big < 20 || big > 10_000 || big * 0.9 > count)) {
      throw new Error(
        `--big is 0 or 20 to 10,000 members, nine tenths of them among the ${count} sockets (got ${big})`,
      );
    }
    return { mode, nodes: m.nodes, count, clients, width: whole("width", a.width, 100), big };
  });
}
