// The chaos suite's own servers, on private ports under a private temp dir: a Redis (no persistence), a
// Postgres cluster (initdb), and Flock nodes as real processes. Never the shared 6379 / 5432. Everything started
// here is registered for cleanup, which also runs on failure and on SIGINT/SIGTERM.
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { chownSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

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

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}

function killHard(child: ChildProcess | undefined): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once("exit", () => r()));
}

// --- Redis -----------------------------------------------------------------------------------------------

export class PrivateRedis {
  private child: ChildProcess | undefined;
  readonly url: string;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), makeTempDir("redis"));
    onCleanup(() => killHard(r.child));
    await r.startProcess();
    return r;
  }

  /** Starts redis-server (empty: no RDB, no AOF) and resolves once it answers PING. */
  async startProcess(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    args.push("--dir", this.dir, "--protected-mode", "no");
    this.child = spawn("redis-server", args, { stdio: "ignore" });
    await waitFor(`redis on ${this.port}`, () => this.ping(), 10_000);
  }

  async kill9(): Promise<void> {
    const c = this.child;
    killHard(c);
    if (c) await exited(c);
  }

  async ping(): Promise<boolean> {
    const r = this.client();
    try {
      return (await r.ping()) === "PONG";
    } finally {
      r.disconnect();
    }
  }

  async flushall(): Promise<void> {
    const r = this.client();
    try {
      await r.flushall();
    } finally {
      r.disconnect();
    }
  }

  private client(): Redis {
    const r = new Redis(this.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
    r.on("error", () => {}); // a refused connection is the answer here, not news
    return r;
  }
}

// --- Postgres --------------------------------------------------------------------------------------------

function pgBin(name: string): string {
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const p = join(base, v, "bin", name);
      if (existsSync(p)) return p;
    }
  }
  return name; // on PATH
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

function pgCommand(name: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", pgBin(name), ...args]] : [pgBin(name), args];
}

/**
 * Runs a Postgres tool as the postgres user when we are root (initdb and postgres refuse to run as root).
 * Asynchronous, so the traffic keeps flowing (and keeps being timed) while pg_ctl waits.
 */
function pgRun(name: string, args: string[]): Promise<void> {
  const [cmd, argv] = pgCommand(name, args);
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${name} ${args.join(" ")} failed (${err.message}):\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

/** The same, blocking: only for cleanup at exit. */
function pgRunSync(name: string, args: string[]): void {
  const [cmd, argv] = pgCommand(name, args);
  spawnSync(cmd, argv, { encoding: "utf8", timeout: 15_000 });
}

export class PrivatePostgres {
  readonly url: string;
  private readonly data: string;
  private running = false;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    this.data = join(dir, "data");
    this.url = `postgres://postgres@127.0.0.1:${port}/flock`;
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = makeTempDir("pg");
    if (asRoot) {
      const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
      const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
      chownSync(dir, uid, gid);
    }
    const pg = new PrivatePostgres(await freePort(), dir);
    await pgRun("initdb", ["-D", pg.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    onCleanup(() => pg.stopSync());
    await pg.startServer();
    await pgRun("createdb", ["-h", "127.0.0.1", "-p", String(pg.port), "-U", "postgres", "flock"]);
    return pg;
  }

  /** Starts the cluster and waits until it accepts connections (pg_ctl -w). */
  async startServer(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
    this.running = true;
    await pgRun("pg_ctl", ["-D", this.data, "-l", join(this.dir, "postgres.log"), "-o", opts, "-w", "-t", "30", "start"]);
  }

  /** `pg_ctl stop -m immediate`: every backend dies at once, no checkpoint (crash recovery on the next start). */
  async stopImmediate(): Promise<void> {
    await pgRun("pg_ctl", ["-D", this.data, "-m", "immediate", "-w", "stop"]);
    this.running = false;
  }

  private stopSync(): void {
    if (!this.running) return;
    this.running = false;
    pgRunSync("pg_ctl", ["-D", this.data, "-m", "immediate", "-w", "-t", "10", "stop"]);
  }
}

// --- Flock nodes -----------------------------------------------------------------------------------------

export class FlockNode {
  private child: ChildProcess | undefined;
  readonly url: string;
  private readonly logFile: string;
  /** Starts so far (1 after the first start). */
  starts = 0;

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

  /** Starts `node --import tsx runtime/main.ts` on this node's fixed port; resolves once /healthz answers 200. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.starts++;
    const child = spawn(process.execPath, ["--import", "tsx", "runtime/main.ts"], {
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
