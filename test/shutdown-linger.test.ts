// A SIGTERM'd node answers every request it accepts, and resets none (issue 38, case 4): it serves on for
// FLOCK_SHUTDOWN_LINGER seconds, each answer closing its connection, before it stops listening; every answer before
// that says how long a kept-alive connection may sit idle (Keep-Alive: timeout=N). Before the linger, a request a
// client sent on a kept-alive connection a moment after the SIGTERM met a closed process: ECONNRESET.
import { connect, type Socket } from "node:net";
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";

/** One raw HTTP/1.1 connection: requests written by hand, answers read whole (Content-Length bodies, in bytes). */
class Conn {
  private buf = Buffer.alloc(0);
  private ended = false;
  private error: Error | undefined;
  private constructor(private readonly sock: Socket) {
    sock.on("data", (d: Buffer) => (this.buf = Buffer.concat([this.buf, d])));
    sock.on("end", () => (this.ended = true));
    sock.on("error", (e) => (this.error = e));
  }

  static open(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => resolve(new Conn(s)));
      s.once("error", reject);
    });
  }

  /** Sends one request; resolves with the status line and headers, or with the socket error (ECONNRESET, ...). */
  async request(
    path: string,
    token: string,
  ): Promise<{ status: number; headers: Record<string, string>; closed: boolean } | { error: string }> {
    this.buf = Buffer.alloc(0);
    this.sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    await until(() => this.error !== undefined || this.ended || this.complete(), {
      ms: 10_000,
      what: () => `an answer or a socket error (got ${JSON.stringify(this.buf.toString())})`,
    });
    if (!this.complete())
      return {
        error: this.error
          ? ((this.error as NodeJS.ErrnoException).code ?? this.error.message)
          : "closed without an answer",
      };
    const head = this.buf.subarray(0, this.buf.indexOf("\r\n\r\n")).toString();
    const [statusLine, ...lines] = head!.split("\r\n");
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
    );
    if (headers["connection"] === "close")
      await until(() => this.ended || this.error !== undefined, { ms: 5_000, what: "the server's close" });
    return { status: Number(statusLine!.split(" ")[1]), headers, closed: this.ended };
  }

  private complete(): boolean {
    const i = this.buf.indexOf("\r\n\r\n");
    if (i < 0) return false;
    const m = /content-length:\s*(\d+)/i.exec(this.buf.subarray(0, i).toString());
    return this.buf.length - i - 4 >= Number(m?.[1] ?? 0);
  }

  destroy(): void {
    this.sock.destroy();
  }
}

t.test(
  "SIGTERM: a kept-alive connection used a second after the signal is answered and closed, never reset",
  async (t) => {
    const schema = uniqueName("linger");
    const prefix = `${schema}:`;
    t.teardown(async () => {
      await dropSchema(schema);
      await deletePrefix(prefix);
    });
    const p = await startProcess({
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      PG_SCHEMA: schema,
      REDIS_PREFIX: prefix,
      FLOCK_SHUTDOWN_LINGER: "5",
    });
    t.teardown(() => p.stop("SIGKILL"));
    const me = await registerAgent(p.url, "linger");

    const kept = await Conn.open(p.port);
    t.teardown(() => kept.destroy());
    const before = await kept.request("/v1/agents/me", me.token);
    if ("error" in before) throw new Error(before.error);
    t.equal(before.status, 200);
    t.equal(before.headers["keep-alive"], "timeout=5", "every answer says how long an idle connection may stay open");
    t.not(before.headers["connection"], "close", "kept alive before the signal");

    const exited = new Promise<number | null>((resolve) => p.child.once("exit", resolve));
    p.child.kill("SIGTERM");
    await until(() => /"msg":"draining/.test(p.output()), { ms: 5_000, what: "the node to start draining" });
    // a client that saw no close yet sends on its idle connection: well inside the 5 s its Keep-Alive hint allows
    // (a pause, not a wait on a condition: what is shown is that a connection idle for a while is still served)
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = await kept.request("/v1/agents/me", me.token);
    t.notOk("error" in after, `answered, not reset (${"error" in after ? after.error : ""})`);
    if (!("error" in after)) {
      t.equal(after.status, 200, "served while lingering");
      t.equal(after.headers["connection"], "close", "and the answer closes the connection");
      t.ok(after.closed, "the node closed it after the answer");
      t.equal(after.headers["keep-alive"], undefined, "no Keep-Alive hint on a closing answer");
    }
    // a new connection while lingering is served too, and closed after one answer
    const fresh = await Conn.open(p.port);
    t.teardown(() => fresh.destroy());
    const third = await fresh.request("/v1/agents/me", me.token);
    t.match(third, { status: 200, headers: { connection: "close" }, closed: true });
    // and it says it is not ready, so a balancer stops sending it new connections
    const ready = await Conn.open(p.port);
    t.teardown(() => ready.destroy());
    t.match(
      await ready.request("/readyz", me.token),
      { status: 503, headers: { "retry-after": "1", connection: "close" } },
      "/readyz: 503 while lingering",
    );
    // its last second refuses: 503 with a Retry-After that outlasts the listening socket, so a client that waits as
    // told comes back to a refused connection, never to one reset in the kernel's accept queue
    let refused: Awaited<ReturnType<Conn["request"]>> | undefined;
    await until(
      async () => {
        const c = await Conn.open(p.port);
        try {
          const r = await c.request("/v1/agents/me", me.token);
          if ("status" in r && r.status === 503) refused = r;
          return refused !== undefined;
        } finally {
          c.destroy();
        }
      },
      { ms: 10_000, every: 100, what: "the refusing end of the linger" },
    );
    t.match(
      refused,
      { status: 503, headers: { "retry-after": "2", connection: "close" }, closed: true },
      "503, Retry-After: 2, closed",
    );

    t.equal(await exited, 0, "exits cleanly after the linger");
    const drained = /"drained":(\d+),"inflight":(\d+),"ms":(\d+),"msg":"requests drained"/.exec(p.output());
    t.ok(drained, "logs how many requests it drained, and how long it took");
    t.ok(Number(drained?.[1]) >= 4, `the four answered while draining are counted (${drained?.[1]})`);
    t.equal(Number(drained?.[2]), 0, "none left in flight");
    t.ok(Number(drained?.[3]) >= 5_000, `the drain lasted the linger (${drained?.[3]} ms)`);
  },
);
