// The client processes of the connections scenario, seen from the scenario: each a child (bench/lib/conn-client.ts)
// holding its share of the sockets from a loopback address of its own (127.0.0.2, .3, ...), driven over IPC.
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { ClientAgent, ClientCommand, ClientOpened, ClientStats } from "./conn-client.ts";
import { cpuMs, ROOT } from "./procs.ts";

type Reply = ClientOpened | ClientStats | { type: "error"; message: string };

class ClientProc {
  private waiting: ((r: Reply) => void)[] = [];

  constructor(
    readonly child: ChildProcess,
    readonly localAddress: string,
  ) {
    child.on("message", (r: Reply) => this.waiting.shift()?.(r));
    child.once("exit", (code) => {
      for (const w of this.waiting.splice(0))
        w({ type: "error", message: `client process ${localAddress} exited (${code})` });
    });
  }

  ask<T extends Reply>(cmd: ClientCommand): Promise<T> {
    return new Promise((resolve, reject) => {
      this.waiting.push((r) => (r.type === "error" ? reject(new Error(r.message)) : resolve(r as T)));
      this.child.send(cmd);
    });
  }

  tell(cmd: ClientCommand): void {
    this.child.send(cmd);
  }
}

/** Totals over every client process; each process's CPU (ms, read from /proc) and RSS (MB) apart. */
export type FleetStats = Omit<ClientStats, "type" | "cpuMs" | "rssMb"> & { cpuMs: number[]; rssMb: number[] };

export class ConnFleet {
  private constructor(private readonly procs: ClientProc[]) {}

  /** `n` client processes on 127.0.0.`first` ... 127.0.0.(first+n-1). */
  static start(n: number, first = 2): ConnFleet {
    const procs = Array.from({ length: n }, (_, i) => {
      const child = fork(join(ROOT, "bench/lib/conn-client.ts"), [], {
        execArgv: ["--import", "tsx", "--max-old-space-size=4096"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      return new ClientProc(child, `127.0.0.${i + first}`);
    });
    return new ConnFleet(procs);
  }

  get size(): number {
    return this.procs.length;
  }

  /** Client process pids (for their CPU). */
  get pids(): number[] {
    return this.procs.map((p) => p.child.pid!);
  }

  /**
   * Opens the agents' sockets, `agents[k]` by process k, each process `width` connects in flight at once: the
   * slowest process's time and the totals.
   */
  async open(agents: ClientAgent[][], width: number): Promise<{ ok: number; failed: number; ms: number }> {
    const r = await Promise.all(
      this.procs.map((p, k) =>
        p.ask<ClientOpened>({ type: "open", agents: agents[k] ?? [], width, localAddress: p.localAddress }),
      ),
    );
    return { ok: sum(r.map((x) => x.ok)), failed: sum(r.map((x) => x.failed)), ms: Math.max(...r.map((x) => x.ms)) };
  }

  /** Starts one long poll loop per agent, `agents[k]` in process k (each agent's url: the node's http:// base). */
  async poll(agents: ClientAgent[][], timeoutS: number): Promise<void> {
    await Promise.all(
      this.procs.map((p, k) =>
        p.ask<ClientOpened>({ type: "poll", agents: agents[k] ?? [], timeoutS, localAddress: p.localAddress }),
      ),
    );
  }

  stopPolls(): void {
    for (const p of this.procs) p.tell({ type: "stop-polls" });
  }

  reconnect(on: boolean): void {
    for (const p of this.procs) p.tell({ type: "reconnect", on });
  }

  async stats(): Promise<FleetStats> {
    const all = await Promise.all(this.procs.map((p) => p.ask<ClientStats>({ type: "stats" })));
    const merge = (pick: (s: ClientStats) => Record<string, number>) => sumCounts(all.map(pick));
    return {
      sockets: sum(all.map((s) => s.sockets)),
      ready: sum(all.map((s) => s.ready)),
      refused: merge((s) => s.refused),
      bodies: merge((s) => s.bodies),
      polling: sum(all.map((s) => s.polling)),
      polls: merge((s) => s.polls),
      latePolls: sum(all.map((s) => s.latePolls)),
      redelivered: sum(all.map((s) => s.redelivered)),
      reconnects: sum(all.map((s) => s.reconnects)),
      lastReadyAt: Math.max(...all.map((s) => s.lastReadyAt)),
      big: {
        received: sum(all.map((s) => s.big.received)),
        duplicates: sum(all.map((s) => s.big.duplicates)),
        latency: merge((s) => s.big.latency),
      },
      cpuMs: this.procs.map((p) => cpuMs(p.child.pid!)),
      rssMb: all.map((s) => s.rssMb),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.child.exitCode !== null) return resolve();
            const t = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
            p.child.once("exit", () => (clearTimeout(t), resolve()));
            p.tell({ type: "exit" });
          }),
      ),
    );
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Counts by key, added key by key (statuses, bodies, latency buckets). */
export function sumCounts(counts: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
  return out;
}
