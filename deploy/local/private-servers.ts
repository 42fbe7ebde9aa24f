// Private Redis and Postgres servers, each on its own free port under its own temp dir, never the shared 6379 / 5432:
// the local cluster's (deploy/local/cluster.ts), the fan-out bench's free ports (bench/peers/servers.ts), and the fault
// tests' and the chaos suite's (through test/helpers/private-servers.ts), which may kill, stop, pause and restart them.
// Starting, stopping and restarting are asynchronous (traffic keeps flowing, and keeps being timed, while pg_ctl
// waits). Whatever is started is stopped and its dir removed at the caller's teardown when one is given, and
// (synchronously) when the process exits, also after a failure.
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import postgres from "postgres";
import { probing, until } from "./wait.ts";

/** Something that runs cleanups when it ends (a tap test). */
export interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

const atExit = new Set<() => void>();
process.once("exit", () => {
  for (const fn of atExit) {
    try {
      fn();
    } catch {
      // keep cleaning
    }
  }
});

/** Runs `cleanup` at the caller's teardown (after `stop`) if there is one, and at exit if it has not run by then. */
export function register(t: Teardown | undefined, cleanup: () => void, stop: () => Promise<void>): void {
  atExit.add(cleanup);
  t?.teardown(async () => {
    await stop();
    cleanup();
    atExit.delete(cleanup);
  });
}

/** A TCP port nobody listens on at 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `flock-${label}-`));
}

/** A redis-server of our own. `aof`: append-only file, so a restart comes back with the data. */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  readonly url: string;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly aof: boolean,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async start(t?: Teardown, opts: { aof?: boolean } = {}): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), tempDir("redis"), opts.aof ?? false);
    const cleanup = () => {
      r.child?.kill("SIGKILL");
      rmSync(r.dir, { recursive: true, force: true });
    };
    register(t, cleanup, () => r.kill());
    await r.restart();
    return r;
  }

  /** Start the server (again: empty unless `aof`) and resolve once it answers PING. */
  async restart(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", ""];
    args.push("--appendonly", this.aof ? "yes" : "no", "--appendfsync", "always", "--protected-mode", "no");
    this.child = spawn("redis-server", args, { stdio: "ignore" });
    await until(
      probing(() => this.ping()),
      { ms: 10_000, every: 20, what: `redis on ${this.port}` },
    );
  }

  /** kill -9, resolved once the process is gone (its port refuses connections from then on). */
  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  }

  async ping(): Promise<boolean> {
    return (await this.command((r) => r.ping())) === "PONG";
  }

  async flushall(): Promise<void> {
    await this.command((r) => r.flushall());
  }

  /** CLIENT PAUSE ms WRITE: every client's writes wait (reads go on) until `ms` pass or `unpause`. */
  async pauseWrites(ms: number): Promise<void> {
    await this.command((r) => r.call("CLIENT", "PAUSE", String(ms), "WRITE"));
  }

  async unpause(): Promise<void> {
    await this.command((r) => r.call("CLIENT", "UNPAUSE"));
  }

  private async command<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    const r = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 1000,
    });
    r.on("error", () => {}); // a refused connection is the answer here, not news
    try {
      await r.connect();
      return await fn(r);
    } finally {
      r.disconnect();
    }
  }
}

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

/** initdb and postgres refuse to run as root: as root, run them as the postgres user. */
function pgCommand(name: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", pgBin(name), ...args]] : [pgBin(name), args];
}

function pgRun(name: string, args: string[]): Promise<void> {
  const [cmd, argv] = pgCommand(name, args);
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${name} ${args.join(" ")} failed (${err.message}):\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

/** A Postgres cluster of our own (initdb, trust auth, socket and data in a temp dir), run as the postgres user. */
export class PrivatePostgres {
  readonly url: string;
  private readonly data: string;
  private running = false;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    this.data = join(dir, "data");
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  static async start(t?: Teardown): Promise<PrivatePostgres> {
    const dir = tempDir("pg");
    if (asRoot) chownSync(dir, id("-u"), id("-g"));
    const pg = new PrivatePostgres(await freePort(), dir);
    const cleanup = () => {
      if (pg.running)
        spawnSync(...pgCommand("pg_ctl", ["-D", pg.data, "-m", "immediate", "-w", "-t", "10", "stop"]), {
          timeout: 15_000,
        });
      pg.running = false;
      rmSync(dir, { recursive: true, force: true });
    };
    register(t, cleanup, async () => {
      if (pg.running) await pg.stop();
    });
    await pgRun("initdb", ["-D", pg.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
    await pg.restart();
    return pg;
  }

  /** Start the cluster (again); resolves once `select 1` answers. */
  async restart(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
    this.running = true;
    await pgRun("pg_ctl", ["-D", this.data, "-l", join(this.dir, "log"), "-o", opts, "-w", "-t", "30", "start"]);
    const answers = async () => {
      const sql = postgres(this.url, { max: 1, connect_timeout: 1, onnotice: () => {} });
      try {
        await sql`select 1`;
        return true;
      } finally {
        await sql.end({ timeout: 0 });
      }
    };
    await until(probing(answers), { ms: 10_000, every: 20, what: `postgres on ${this.port}` });
  }

  /** Stop at once (`-m immediate`: backends are killed, like a crash; recovery on the next start). */
  async stop(): Promise<void> {
    await pgRun("pg_ctl", ["-D", this.data, "-m", "immediate", "-w", "stop"]);
    this.running = false;
  }
}

function id(flag: "-u" | "-g"): number {
  return Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
}
