// Counts a node's round trips to Postgres and Redis (the round-trip budget, test/round-trips.test.ts): a TCP proxy on
// 127.0.0.1 between the node and each real server that reads the client's side of the wire protocol and logs each
// statement and each command, named. Postgres: a simple Query, or an extended-protocol Sync (one per statement
// postgres.js sends), named by the SQL its Parse gave (a Bind names the prepared statement it runs). Redis: each
// RESP command, an EVALSHA named by its script's file (runtime/scripts/<name>-<keys>.lua). The proxy can also hold
// the servers' answers back: what an answer then still comes without was not on its path.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect } from "node:net";
import { join } from "node:path";

/** One statement or command as the proxy saw it go to its server. */
export interface Call {
  /** Postgres: the statement's SQL, whitespace folded; Redis: the command (an EVALSHA: `EVALSHA <script>`). */
  label: string;
  /** Its order among every call of both proxies. */
  n: number;
}

let order = 0;

export class CountingProxy {
  readonly calls: Call[] = [];
  private server: Server | undefined;
  private held: (() => void)[] | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly upstream: { host: string; port: number },
    private readonly reader: () => (chunk: Buffer, log: (label: string) => void) => void,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      const server = connect(this.upstream.port, this.upstream.host);
      this.sockets.add(client).add(server);
      const read = this.reader();
      client.on("data", (chunk) => {
        read(chunk, (label) => this.calls.push({ label, n: order++ }));
        server.write(chunk);
      });
      server.on("data", (chunk) => {
        if (this.held) this.held.push(() => client.write(chunk));
        else client.write(chunk);
      });
      const end = () => {
        client.destroy();
        server.destroy();
        this.sockets.delete(client);
        this.sockets.delete(server);
      };
      client.on("close", end).on("error", end);
      server.on("close", end).on("error", end);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Hold every answer of the server back (requests still go through) until `release`. */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const write of held) write();
  }

  /** The calls logged from `from` (a length of `calls` taken before) on. */
  since(from: number): Call[] {
    return this.calls.slice(from);
  }

  async close(): Promise<void> {
    this.release();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const fold = (sql: string) => sql.replace(/\s+/g, " ").trim();

/** The frontend side of the Postgres wire protocol: a startup message (after an optional SSLRequest), then typed messages. */
export function postgresReader(): (chunk: Buffer, log: (label: string) => void) => void {
  let buf = Buffer.alloc(0);
  let started = false;
  const statements = new Map<string, string>();
  let pending = "";
  return (chunk, log) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (!started) {
        if (buf.length < 8) return;
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        const code = buf.readInt32BE(4);
        buf = buf.subarray(len);
        if (code !== 80877103) started = true; // an SSLRequest is followed by the startup message
        continue;
      }
      if (buf.length < 5) return;
      const type = String.fromCharCode(buf[0]!);
      const len = buf.readInt32BE(1);
      if (buf.length < 1 + len) return;
      const body = buf.subarray(5, 1 + len);
      buf = buf.subarray(1 + len);
      if (type === "P") {
        const nameEnd = body.indexOf(0);
        const name = body.subarray(0, nameEnd).toString();
        const text = fold(body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString());
        statements.set(name, text);
        pending = text;
      } else if (type === "B") {
        const portalEnd = body.indexOf(0);
        const name = body.subarray(portalEnd + 1, body.indexOf(0, portalEnd + 1)).toString();
        pending = statements.get(name) ?? pending;
      } else if (type === "S") {
        log(pending);
      } else if (type === "Q") {
        log(fold(body.subarray(0, body.indexOf(0)).toString()));
      }
    }
  };
}

/** The Lua scripts by their SHA-1, named as their files are (`streamAppend`). */
function scriptNames(): Map<string, string> {
  const dir = join(import.meta.dirname, "..", "..", "runtime", "scripts");
  const names = new Map<string, string>();
  for (const file of readdirSync(dir)) {
    const m = /^([a-z][a-zA-Z0-9]*)-(\d+|n)\.lua$/.exec(file);
    if (m)
      names.set(
        createHash("sha1")
          .update(readFileSync(join(dir, file), "utf8"))
          .digest("hex"),
        m[1]!,
      );
  }
  return names;
}

/** The client side of RESP: arrays of bulk strings, one a command. */
export function redisReader(): (chunk: Buffer, log: (label: string) => void) => void {
  const scripts = scriptNames();
  let buf = Buffer.alloc(0);
  return (chunk, log) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const parsed = command(buf);
      if (parsed === null) return;
      buf = buf.subarray(parsed.used);
      const [name = "", arg1 = ""] = parsed.args;
      const cmd = name.toUpperCase();
      if (cmd === "EVALSHA") log(`EVALSHA ${scripts.get(arg1) ?? arg1}`);
      else if (cmd === "EVAL") log(`EVAL ${scripts.get(createHash("sha1").update(arg1).digest("hex")) ?? "?"}`);
      else log(cmd);
    }
  };
}

/** One RESP array of bulk strings at the start of `buf` (its first two arguments kept), or null if not all there. */
function command(buf: Buffer): { args: string[]; used: number } | null {
  const line = (at: number) => {
    const end = buf.indexOf("\r\n", at);
    return end < 0 ? null : { text: buf.subarray(at, end).toString(), next: end + 2 };
  };
  const head = line(0);
  if (head === null) return null;
  if (!head.text.startsWith("*")) throw new Error(`not a RESP array: ${head.text.slice(0, 40)}`);
  const count = Number(head.text.slice(1));
  const args: string[] = [];
  let at = head.next;
  for (let i = 0; i < count; i++) {
    const len = line(at);
    if (len === null) return null;
    const size = Number(len.text.slice(1));
    if (buf.length < len.next + size + 2) return null;
    if (i < 2) args.push(buf.subarray(len.next, len.next + size).toString());
    at = len.next + size + 2;
  }
  return { args, used: at };
}

/** A proxy in front of Postgres and one in front of Redis, started. */
export async function countingProxies(pg: { host: string; port: number }, redis: { host: string; port: number }) {
  const [postgres, redisProxy] = await Promise.all([
    new CountingProxy(pg, postgresReader).start(),
    new CountingProxy(redis, redisReader).start(),
  ]);
  return { postgres, redis: redisProxy };
}
