// Helpers shared by the messaging tests (HTTP and WebSocket).
import WebSocket from "ws";
import { decode, encode } from "@msgpack/msgpack";
import type { Sql } from "../runtime/db/client.ts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { until } from "./helpers/wait.ts";

export async function send(
  base: string,
  from: Registered,
  to: string,
  body = "hello",
  extra: Record<string, unknown> = {},
) {
  return call(base, "POST", "/v1/messages", { token: from.token, json: { to, body, ...extra } });
}

export async function sendOk(base: string, from: Registered, to: string, body = "hello") {
  const r = await send(base, from, to, body);
  if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
  return r.body;
}

export async function pending(base: string, who: Registered, query = "timeout=0") {
  const r = await call(base, "GET", `/v1/messages/pending?${query}`, { token: who.token });
  if (r.status !== 200) throw new Error(`pending failed: ${r.status} ${r.text}`);
  return r.body.messages as any[];
}

export async function ack(base: string, who: Registered, id: string) {
  return call(base, "POST", `/v1/messages/${id}/ack`, { token: who.token });
}

/** `n` agents named "<name> 0" to "<name> n-1", registered one after another. */
export async function registerAgents(base: string, n: number, name: string): Promise<Registered[]> {
  const out: Registered[] = [];
  for (let i = 0; i < n; i++) out.push(await registerAgent(base, `${name} ${i}`));
  return out;
}

/**
 * Receive (long polling, acking each) until every recipient got every message id `accepted` lists for it, or 100
 * polls; the ids that never came, as "recipient: id".
 */
export async function undelivered(
  base: string,
  recipients: Registered[],
  accepted: Map<string, Set<string>>,
): Promise<string[]> {
  const missing: string[] = [];
  for (const r of recipients) {
    const want = accepted.get(r.id)!;
    const got = new Set<string>();
    for (let round = 0; round < 100 && got.size < want.size; round++) {
      const msgs = await pending(base, r, "timeout=1&limit=100").catch(() => []);
      for (const m of msgs) {
        got.add(m.id as string);
        await ack(base, r, m.id as string);
      }
    }
    for (const id of want) if (!got.has(id)) missing.push(`${r.id}: ${id}`);
  }
  return missing;
}

/** Wait for a condition that the code under test makes true (not for time to pass): test/helpers/wait.ts. */

/** Make two principals friends (rows as the friends feature writes them: both directions). */
export async function befriend(sql: Sql, a: string, b: string): Promise<void> {
  await sql`insert into friendships (principal, friend) values (${a}, ${b}), (${b}, ${a}) on conflict do nothing`;
}

/** A WebSocket client that collects frames and lets a test wait for the next one matching a predicate. */
export class Client {
  readonly frames: any[] = [];
  /** Whether each frame came as a binary WebSocket message. */
  readonly binary: boolean[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: { pred: (f: any) => boolean; resolve: (f: any) => void }[] = [];

  constructor(
    readonly ws: WebSocket,
    readonly encoding: "json" | "msgpack",
  ) {
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? decode(data) : JSON.parse(data.toString());
      this.frames.push(frame);
      this.binary.push(isBinary);
      this.check();
    });
    ws.on("close", (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString() };
      this.check();
    });
  }

  static open(
    url: string,
    opts: { token?: string; protocols?: string[]; encoding?: "json" | "msgpack" } = {},
  ): Promise<Client> {
    const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
    const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/ws", opts.protocols ?? [], { headers });
    const c = new Client(ws, opts.encoding ?? "json");
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(c));
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
  }

  send(frame: unknown): void {
    this.ws.send(this.encoding === "msgpack" ? encode(frame) : JSON.stringify(frame));
  }

  /** The next frame (after those already consumed by earlier waits) matching `pred`. */
  next(pred: (f: any) => boolean = () => true, ms = 3000): Promise<any> {
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`no matching frame within ${ms} ms; got ${JSON.stringify(this.frames)}`));
      }, ms);
      w.resolve = (f) => {
        clearTimeout(timer);
        resolve(f);
      };
      this.waiters.push(w);
      this.check();
    });
  }

  nextOfType(type: string, ms?: number): Promise<any> {
    return this.next((f) => f.type === type, ms);
  }

  private consumed = new Set<number>();

  private check(): void {
    for (const w of [...this.waiters]) {
      const i = this.frames.findIndex((f, idx) => !this.consumed.has(idx) && w.pred(f));
      if (i >= 0) {
        this.consumed.add(i);
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(this.frames[i]);
      }
    }
  }

  waitClose(ms = 3000): Promise<{ code: number; reason: string }> {
    return until(() => this.closed !== null, ms).then(() => this.closed!);
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * Sender `a` on node `one` warms up delivery to a poller `b` and a socket client `c` (WebSocket `ws`) served by
 * node `two`: first contact creates the threads and prepares the statements, so timing tests measure steady state.
 */
export async function warmUpAcross(
  one: string,
  two: string,
  a: Registered,
  b: Registered,
  c: Registered,
  ws: Client,
): Promise<void> {
  await ws.nextOfType("ready");
  const w1 = await sendOk(one, a, b.id, "warm-up");
  const w2 = await sendOk(one, a, c.id, "warm-up");
  await Promise.all([pending(two, b), ws.nextOfType("message")]);
  await Promise.all([ack(two, b, w1.id), ack(two, c, w2.id)]);
}

/** A group of `owner` with `members`, made through the API; its id. */
export async function createGroup(base: string, owner: Registered, members: Registered[], name = "g"): Promise<string> {
  const r = await call(base, "POST", "/v1/groups", {
    token: owner.token,
    json: { name, members: members.map((m) => m.id) },
  });
  if (r.status !== 201) throw new Error(`group not made: ${r.status} ${r.text}`);
  return r.body.group.id as string;
}

/** Send `body` to group `g` as `from`; the message's id. */
export async function postToGroup(base: string, from: Registered, g: string, body: string): Promise<string> {
  const r = await call(base, "POST", `/v1/groups/${g}/messages`, { token: from.token, json: { body } });
  if (r.status !== 201) throw new Error(`group message not sent: ${r.status} ${r.text}`);
  return r.body.id as string;
}
