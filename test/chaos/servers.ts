// The chaos suite's Flock nodes, as real processes on private ports; its private Redis and Postgres are the fault
// tests' own (test/helpers/private-servers.ts, stopped at exit). Never the shared 6379 / 5432. Everything started
// here is registered for cleanup, which also runs on failure and on SIGINT/SIGTERM.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export { freePort, PrivatePostgres, PrivateRedis } from "../helpers/private-servers.ts";

import { nodeEntry, ROOT } from "../helpers/entry.ts";
import type { LogLine } from "./tracker.ts";

// --- cleanup ---------------------------------------------------------------------------------------------

const cleanups: (() => void)[] = [];

/** Registers a synchronous cleanup (run once, newest first, on exit, failure or signal). */
export function onCleanup(fn: () => void): void {
  cleanups.push(fn);
}

let cleaned = false;
export function cleanupAll(): void {
  if (cleaned) return;
  cleaned = true;
  for (const fn of cleanups.reverse()) {
    try {
      fn();
    } catch {
      // keep cleaning
    }
  }
}

process.once("exit", cleanupAll);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    process.stderr.write(`chaos: ${sig}: cleaning up\n`);
    cleanupAll();
    process.exit(130);
  });
}

export function makeTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `flock-chaos-${label}-`));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function killHard(child: ChildProcess | undefined): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

// --- Flock nodes -----------------------------------------------------------------------------------------

export class FlockNode {
  private child: ChildProcess | undefined;
  readonly url: string;
  private readonly logFile: string;
  /** Starts so far (1 after the first start). */
  starts = 0;
  /** Every line it has logged (stdout and stderr, every start), with when it arrived: a fault counts its own. */
  readonly lines: (LogLine & { at: number })[] = [];

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
    logDir: string,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.logFile = join(logDir, `${name}.log`);
    onCleanup(() => killHard(this.child));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts `node dist/runtime/main.js` (what npm start runs) on this node's fixed port; resolves once /healthz answers 200. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.starts++;
    const child = spawn(process.execPath, nodeEntry(), {
      cwd: ROOT,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: process.env["HOME"] ?? "/tmp",
        HOST: "127.0.0.1",
        PORT: String(this.port),
        LOG_LEVEL: "warn",
        FLOCK_LIMITS_SCALE: "10000",
        FLOCK_SHUTDOWN_GRACE: "5",
        ...this.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const log = createWriteStream(this.logFile, { flags: "a" });
    log.write(`--- start ${this.starts} pid ${child.pid} at ${new Date().toISOString()}\n`);
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    this.countLines(child.stdout!);
    this.countLines(child.stderr!);
    let died = false;
    child.once("exit", () => {
      died = true;
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (died) throw new Error(`node ${this.name} exited during startup:\n${this.logTail()}`);
      if (await this.healthy()) return;
      await sleep(50);
    }
    killHard(child);
    throw new Error(`node ${this.name} did not answer /healthz within ${timeoutMs} ms:\n${this.logTail()}`);
  }

  async healthy(): Promise<boolean> {
    try {
      const r = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      return r.status === 200;
    } catch {
      return false;
    }
  }

  get alive(): boolean {
    const c = this.child;
    return !!c && c.exitCode === null && c.signalCode === null;
  }

  /** Sends a signal and waits for the process to exit (SIGKILL after `graceMs`). */
  async signal(sig: NodeJS.Signals, graceMs = 15_000): Promise<{ code: number | null; signal: string | null }> {
    const c = this.child;
    if (!c || !this.alive) return { code: c?.exitCode ?? null, signal: c?.signalCode ?? null };
    const done = new Promise<{ code: number | null; signal: string | null }>((r) =>
      c.once("exit", (code, signal) => r({ code, signal })),
    );
    c.kill(sig);
    const t = setTimeout(() => killHard(c), graceMs);
    const out = await done;
    clearTimeout(t);
    return out;
  }

  /** The lines logged from `since` on. */
  linesSince(since: number): LogLine[] {
    return this.lines.filter((l) => l.at >= since).map(({ node, level, msg }) => ({ node, level, msg }));
  }

  private countLines(stream: NodeJS.ReadableStream): void {
    let rest = "";
    stream.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString("utf8")).split("\n");
      rest = parts.pop()!;
      const at = Date.now();
      for (const line of parts) if (line.trim()) this.lines.push({ at, node: this.name, ...parseLine(line) });
    });
    stream.on("end", () => {
      if (rest.trim()) this.lines.push({ at: Date.now(), node: this.name, ...parseLine(rest) });
      rest = "";
    });
  }

  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }

  get logPath(): string {
    return this.logFile;
  }
}

/** A pino line's level and msg; any other line as it is. */
function parseLine(line: string): { level?: number; msg: string } {
  try {
    const j = JSON.parse(line) as { level?: unknown; msg?: unknown };
    if (typeof j === "object" && j !== null) {
      return {
        level: typeof j.level === "number" ? j.level : undefined,
        msg: typeof j.msg === "string" ? j.msg : line,
      };
    }
  } catch {
    // not JSON
  }
  return { msg: line };
}
