// Graceful shutdown over kept-alive connections: what is in flight finishes, and a request that arrives after the
// backends are closed answers 503 unavailable with Connection: close, never a 500.
import { connect, type Socket } from "node:net";
import t from "tap";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One HTTP/1.1 exchange on a kept-alive raw socket (the next request reuses it). */
class KeptAlive {
  private buf = "";
  private waiting: (() => void) | undefined;
  closed = false;

  constructor(private readonly sock: Socket) {
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      this.buf += d;
      this.waiting?.();
    });
    sock.on("close", () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static open(port: number): Promise<KeptAlive> {
    return new Promise((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => resolve(new KeptAlive(s)));
      s.once("error", reject);
    });
  }

  async request(method: string, path: string, token: string, json?: unknown): Promise<RawResponse> {
    const body = json === undefined ? "" : JSON.stringify(json);
    let head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n`;
    if (json !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
    this.sock.write(`${head}\r\n${body}`);
    return this.response();
  }

  private async response(): Promise<RawResponse> {
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine, ...lines] = this.buf.slice(0, end).split("\r\n");
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(":");
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const len = Number(headers["content-length"] ?? 0);
        if (this.buf.length >= end + 4 + len) {
          const body = this.buf.slice(end + 4, end + 4 + len);
          this.buf = this.buf.slice(end + 4 + len);
          return { status: Number(statusLine!.split(" ")[1]), headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed; had: ${JSON.stringify(this.buf)}`);
      await new Promise<void>((r) => (this.waiting = r));
      this.waiting = undefined;
    }
  }

  end(): void {
    this.sock.destroy();
  }
}

t.test("requests on kept-alive connections during and after shutdown: never 500", async (t) => {
  const node = await startTestNode(t);
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const sender = await KeptAlive.open(node.port);
  const poller = await KeptAlive.open(node.port);
  t.teardown(() => {
    sender.end();
    poller.end();
  });
  const first = await sender.request("POST", "/v1/messages", a.token, { to: b.id, body: "one" });
  t.equal(first.status, 201);
  t.not(first.headers["connection"], "close");

  // a long poll in flight when shutdown starts is answered (empty, at once), not cut off
  const drained = await poller.request("GET", "/v1/messages/pending?timeout=0", b.token);
  t.equal(drained.status, 200);
  const ids = (JSON.parse(drained.body) as { messages: { id: string }[] }).messages.map((m) => m.id);
  for (const id of ids) t.equal((await poller.request("POST", `/v1/messages/${id}/ack`, b.token)).status, 204);
  const waiting = node.svc.hub.waiters.size;
  const poll = poller.request("GET", "/v1/messages/pending?timeout=20", b.token);
  await until(() => node.svc.hub.waiters.size > waiting, { what: "the long poll to wait" });
  const closing = node.close();
  const answered = await poll;
  t.equal(answered.status, 200, `long poll during shutdown: ${answered.body}`);
  t.equal(answered.headers["connection"], "close");
  await closing;

  // the backends are closed now: the kept-alive connection's next requests answer 503 and close
  const late = await sender.request("POST", "/v1/messages", a.token, { to: b.id, body: "late" });
  t.equal(late.status, 503, `send after shutdown: ${late.body}`);
  t.match(JSON.parse(late.body), { error: "unavailable", message: /shutting down/ });
  t.equal(late.headers["connection"], "close");
  t.ok(Number(late.headers["retry-after"]) >= 1);
});
