// A lean HTTP/1.1 client for the open-loop scenarios: keep-alive sockets, one request in flight on each
// (no pipelining), responses framed by Content-Length (none on 204 and 304). `fetch` costs the bench
// process several hundred microseconds a request, enough to make the load generator, not the server, the bottleneck at
// 2,000 messages per second on two cores.
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  body: string;
}

interface Pending {
  head: string;
  body: Buffer | undefined;
  resolve: (r: RawResponse) => void;
  reject: (e: Error) => void;
}

class Connection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  current: Pending | undefined;
  closed = false;

  constructor(
    host: string,
    port: number,
    private readonly onIdle: (c: Connection) => void,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on("data", (d) => this.onData(d));
    const fail = (err?: Error) => {
      this.closed = true;
      this.current?.reject(err ?? new Error("connection closed"));
      this.current = undefined;
    };
    this.socket.on("error", fail);
    this.socket.on("close", () => fail());
  }

  send(p: Pending): void {
    this.current = p;
    this.socket.cork();
    this.socket.write(p.head);
    if (p.body) this.socket.write(p.body);
    this.socket.uncork();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const end = this.buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = this.buf.toString("latin1", 0, end);
    const status = Number(head.slice(9, 12));
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!m && status !== 204 && status !== 304) {
      this.current?.reject(new Error("response without Content-Length"));
      this.socket.destroy();
      return;
    }
    const total = end + 4 + (m ? Number(m[1]) : 0);
    if (this.buf.length < total) return;
    const res = { status, body: this.buf.toString("utf8", end + 4, total) };
    this.buf = this.buf.subarray(total);
    const p = this.current;
    this.current = undefined;
    p?.resolve(res);
    this.onIdle(this);
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }
}

/** Up to `size` keep-alive connections to one server; requests beyond them wait their turn. */
export class RawHttp {
  private readonly idle: Connection[] = [];
  private readonly all: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private readonly host: string;
  private readonly port: number;

  constructor(
    url: string,
    private readonly size: number,
  ) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
  }

  /** One request; `headers` are added as given (an Idempotency-Key from keyHeader(), bench/lib/idempotency.ts). */
  request(
    method: string,
    path: string,
    token?: string,
    json?: unknown,
    headers?: Record<string, string>,
  ): Promise<RawResponse> {
    const body = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    if (token) head += `authorization: Bearer ${token}\r\n`;
    for (const [k, v] of Object.entries(headers ?? {})) head += `${k}: ${v}\r\n`;
    head += body
      ? `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`
      : "content-length: 0\r\n\r\n";
    return new Promise((resolve, reject) => {
      const p: Pending = { head, body, resolve, reject };
      const conn = this.take();
      if (conn) conn.send(p);
      else this.waiting.push(p);
    });
  }

  close(): void {
    for (const c of this.all) c.close();
    for (const p of this.waiting.splice(0)) p.reject(new Error("client closed"));
  }

  private take(): Connection | undefined {
    while (this.idle.length > 0) {
      const c = this.idle.pop()!;
      if (!c.closed) return c;
    }
    this.prune();
    if (this.all.length < this.size) {
      const c = new Connection(this.host, this.port, (x) => this.release(x));
      this.all.push(c);
      return c;
    }
    return undefined;
  }

  private release(c: Connection): void {
    const next = this.waiting.shift();
    if (next) c.send(next);
    else this.idle.push(c);
  }

  private prune(): void {
    for (let i = this.all.length - 1; i >= 0; i--) if (this.all[i]!.closed) this.all.splice(i, 1);
  }
}
