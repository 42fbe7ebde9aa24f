// Private Redis and Postgres servers for fault tests: each on its own free port under its own temp dir, never the
// shared 6379 / 5432, so a test may kill, stop and restart them. Whatever is started is stopped and its dir removed
// at the test's teardown, and (synchronously) when the test process exits, also after a failure.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import postgres from "postgres";

interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

const atExit = new Set<() => void>();
process.once("exit", () => {
  for (const fn of atExit) fn();
});

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

/** Poll `ready` (a real answer from the server) until it says yes, at most `ms`. */
async function waitUntil(what: string, ready: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not up within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function tempDir(label: string): string {
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

  static async start(t: Teardown, opts: { aof?: boolean } = {}): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), tempDir("redis"), opts.aof ?? false);
    const cleanup = () => {
      r.child?.kill("SIGKILL");
      rmSync(r.dir, { recursive: true, force: true });
    };
    atExit.add(cleanup);
    t.teardown(async () => {
      await r.kill();
      cleanup();
      atExit.delete(cleanup);
    });
    await r.restart();
    return r;
  }

  /** Start the server (again) and resolve once it answers PING. */
  async restart(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", ""];
    args.push("--appendonly", this.aof ? "yes" : "no", "--appendfsync", "always");
    this.child = spawn("redis-server", args, { stdio: "ignore" });
    await waitUntil(`redis on ${this.port}`, () => this.ping(), 10_000);
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
    const r = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
    r.on("error", () => {});
    try {
      await r.connect();
      return (await r.ping()) === "PONG";
    } finally {
      r.disconnect();
    }
  }
}

function pgBin(name: string): string {
  return `/usr/lib/postgresql/15/bin/${name}`;
}

/** A Postgres cluster of our own (initdb, trust auth, socket and data in a temp dir), run as the postgres user. */
export class PrivatePostgres {
  readonly url: string;
  private readonly data: string;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    this.data = join(dir, "data");
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  static async start(t: Teardown): Promise<PrivatePostgres> {
    const dir = tempDir("pg");
    chownSync(dir, uid("postgres"), uid("postgres", "-g"));
    const pg = new PrivatePostgres(await freePort(), dir);
    const cleanup = () => {
      pg.ctl(["stop", "-m", "immediate"]);
      rmSync(dir, { recursive: true, force: true });
    };
    atExit.add(cleanup);
    t.teardown(() => {
      cleanup();
      atExit.delete(cleanup);
    });
    asPostgres([pgBin("initdb"), "-D", pg.data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    await pg.restart();
    return pg;
  }

  /** Start the cluster (again); resolves once `select 1` answers. */
  async restart(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const r = this.ctl(["start", "-w", "-l", join(this.dir, "log"), "-o", opts]);
    if (r.status !== 0) throw new Error(`pg_ctl start failed: ${r.stderr}`);
    await waitUntil(`postgres on ${this.port}`, async () => {
      const sql = postgres(this.url, { max: 1, connect_timeout: 1, onnotice: () => {} });
      try {
        await sql`select 1`;
        return true;
      } finally {
        await sql.end({ timeout: 0 });
      }
    }, 10_000);
  }

  /** Stop at once (`-m immediate`: backends are killed, like a crash). */
  stop(): void {
    const r = this.ctl(["stop", "-m", "immediate", "-w"]);
    if (r.status !== 0) throw new Error(`pg_ctl stop failed: ${r.stderr}`);
  }

  private ctl(args: string[]) {
    return asPostgres([pgBin("pg_ctl"), "-D", this.data, ...args]);
  }
}

function asPostgres(cmd: string[]) {
  const r = spawnSync("runuser", ["-u", "postgres", "--", ...cmd], { encoding: "utf8", timeout: 30_000 });
  if (r.error) throw r.error;
  if (cmd[0]!.endsWith("initdb") && r.status !== 0) throw new Error(`initdb failed: ${r.stderr}`);
  return r;
}

function uid(user: string, flag = "-u"): number {
  return Number(spawnSync("id", [flag, user], { encoding: "utf8" }).stdout.trim());
}
