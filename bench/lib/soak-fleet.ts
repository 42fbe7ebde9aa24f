// The soak's fleet: `agents` agents, of which the first `ws + polls` receive (each on a WebSocket or a long poll,
// acking what it gets) and every one sends. Direct messages go from each agent to a few fixed peers among the
// receivers (so the number of threads stops growing in the first seconds, and only messages accumulate); group
// messages go from each group's owner (an agent that does not receive) to its members. Moments are public, liked
// and commented by anyone, and feeds are read. Each stream of calls is driven open-loop at its rate (bench/lib/rate.ts).
import type WebSocket from "ws";
import { openWs } from "../scenarios/realtime.ts";
import type { Deliveries } from "./deliveries.ts";
import { Recorder } from "./deliveries.ts";
import { type Member, pool, registerFleet } from "./fleet.ts";
import { keyHeader } from "./idempotency.ts";
import { atRate } from "./rate.ts";
import { type RawResponse, RawHttp } from "./raw-http.ts";

export interface FleetShape {
  agents: number;
  ws: number;
  polls: number;
  groups: number;
  groupSize: number;
  /** receivers each agent sends direct messages to */
  peers: number;
}

/** Calls a second. */
export interface Rates {
  direct: number;
  group: number;
  moments: number;
  likes: number;
  comments: number;
  feeds: number;
}

export const RATE_NAMES: (keyof Rates)[] = ["direct", "group", "moments", "likes", "comments", "feeds"];

interface Group {
  id: string;
  owner: Member;
  receivers: number[];
}

const REQUEST_TIMEOUT_MS = 30_000;
const MAX_OUTSTANDING = 512;

/** `p`, or a rejection after `ms`. */
function timed<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export class SoakFleet {
  /** what each kind of call answered, by status ("error" when it failed without one) */
  readonly statuses: Record<keyof Rates | "ack" | "poll", Record<string, number>> = {
    direct: {},
    group: {},
    moments: {},
    likes: {},
    comments: {},
    feeds: {},
    ack: {},
    poll: {},
  };
  /** calls made (fired) of each kind: the rates held are these over time */
  readonly fired: Record<keyof Rates, number> = { direct: 0, group: 0, moments: 0, likes: 0, comments: 0, feeds: 0 };
  readonly sendLatency = new Recorder();
  wsReconnects = 0;
  private readonly http: RawHttp;
  private readonly social: RawHttp;
  private readonly closers: (() => void)[] = [];
  private readonly recentMoments: string[] = [];
  private running = false;

  private constructor(
    private readonly url: string,
    private readonly wsUrl: string,
    private readonly shape: FleetShape,
    private readonly fleet: Member[],
    private readonly groups: Group[],
    private readonly deliveries: Deliveries,
  ) {
    this.http = new RawHttp(url, 96);
    this.social = new RawHttp(url, 16);
  }

  static async setup(
    url: string,
    wsUrl: string,
    shape: FleetShape,
    deliveries: Deliveries,
    progress: (m: string) => void,
  ): Promise<SoakFleet> {
    const receivers = shape.ws + shape.polls;
    if (receivers < 2 || receivers > shape.agents)
      throw new Error(`--ws + --polls must be from 2 to --agents (${shape.agents})`);
    progress(`registering ${shape.agents} agents`);
    const fleet = await registerFleet(url, shape.agents, "soak");
    const groups: Group[] = [];
    if (shape.groups > 0) {
      progress(`creating ${shape.groups} groups of ${shape.groupSize} receivers`);
      for (let g = 0; g < shape.groups; g++) {
        // the owner sends and does not receive: an agent past the receivers when there is one
        const ownerIdx = receivers + (g % Math.max(1, shape.agents - receivers));
        const owner = fleet[ownerIdx < shape.agents ? ownerIdx : g % receivers]!;
        const members = [
          ...new Set(Array.from({ length: shape.groupSize }, (_, j) => (g * shape.groupSize + j) % receivers)),
        ].filter((r) => fleet[r] !== owner);
        const created = await owner.flock.createGroup({ name: `soak ${g}`, members: members.map((r) => fleet[r]!.id) });
        groups.push({ id: created.id, owner, receivers: members });
      }
    }
    return new SoakFleet(url, wsUrl, shape, fleet, groups, deliveries);
  }

  /** Connect the receivers: the first `ws` on WebSockets, the next `polls` long polling. */
  async startReceivers(progress: (m: string) => void): Promise<void> {
    this.running = true;
    progress(`connecting ${this.shape.ws} WebSockets and starting ${this.shape.polls} long polls`);
    await pool(
      Array.from({ length: this.shape.ws }, (_, i) => i),
      32,
      (i) => this.connectWs(i),
    );
    for (let k = 0; k < this.shape.polls; k++) this.pollLoop(this.shape.ws + k);
  }

  private async connectWs(r: number): Promise<void> {
    const m = this.fleet[r]!;
    const sock: WebSocket = await openWs(this.wsUrl, m.token, (frame, s) => {
      if (frame.type !== "message") return;
      this.deliveries.got(frame.message.body, r);
      s.send(JSON.stringify({ type: "ack", id: frame.message.id }));
    });
    sock.on("close", () => {
      if (!this.running) return;
      this.wsReconnects++;
      setTimeout(() => void this.connectWs(r).catch(() => {}), 500);
    });
    this.closers.push(() => sock.terminate());
  }

  private pollLoop(r: number): void {
    const m = this.fleet[r]!;
    let own = new RawHttp(this.url, 1); // a long poll holds its connection
    this.closers.push(() => own.close());
    void (async () => {
      while (this.running) {
        try {
          const res = await timed(
            own.request("GET", "/v1/messages/pending?timeout=10&limit=100", m.token),
            REQUEST_TIMEOUT_MS,
          );
          count(this.statuses.poll, res.status);
          if (res.status !== 200) throw new Error(`poll ${res.status}`);
          const msgs =
            (JSON.parse(res.body) as { messages?: { id: string; thread_id: string; body: string }[] }).messages ?? [];
          // one cumulative ack per thread, of the last message handed out in it
          const last = new Map<string, string>();
          for (const msg of msgs) {
            this.deliveries.got(msg.body, r);
            last.set(msg.thread_id, msg.id);
          }
          await Promise.all(
            [...last.values()].map(async (id) => {
              const a = await timed(
                this.http.request("POST", `/v1/messages/${id}/ack?through=true`, m.token),
                REQUEST_TIMEOUT_MS,
              ).catch(() => undefined);
              count(this.statuses.ack, a?.status);
            }),
          );
        } catch {
          // a fresh connection: one that timed out may still hold its answer
          own.close();
          own = new RawHttp(this.url, 1);
          if (this.running) await new Promise((res) => setTimeout(res, 1000));
        }
      }
    })();
  }

  /** Drive every stream of calls at its rate for `seconds`. */
  async drive(rates: Rates, seconds: number): Promise<void> {
    const receivers = this.shape.ws + this.shape.polls;
    const n = this.fleet.length;
    const go = (kind: keyof Rates, fire: (i: number) => Promise<void>) =>
      rates[kind] > 0
        ? atRate(rates[kind], seconds, MAX_OUTSTANDING, (i) => {
            this.fired[kind]++;
            return fire(i);
          })
        : Promise.resolve();
    await Promise.all([
      go("direct", (i) => {
        const s = i % n;
        let r = (s * 31 + (Math.floor(i / n) % this.shape.peers) * 7) % receivers;
        if (r === s) r = (r + 1) % receivers;
        return this.send("direct", `d${i}`, [r], this.fleet[s]!.token, "/v1/messages", { to: this.fleet[r]!.id });
      }),
      go("group", (i) => {
        const g = this.groups[i % this.groups.length];
        if (!g) return Promise.resolve();
        return this.send("group", `g${i}`, g.receivers, g.owner.token, `/v1/groups/${g.id}/messages`, {});
      }),
      go("moments", async (i) => {
        const res = await this.call(
          "moments",
          "POST",
          "/v1/moments",
          this.fleet[i % n]!.token,
          { content: `soak moment ${i}`, visibility: "public" },
          keyHeader(),
        );
        if (res?.status === 201) {
          this.recentMoments.push((JSON.parse(res.body) as { id: string }).id);
          if (this.recentMoments.length > 256) this.recentMoments.shift();
        }
      }),
      go("likes", async (i) => {
        const id = this.recentMoment();
        if (id) await this.call("likes", "POST", `/v1/moments/${id}/like`, this.fleet[(i * 7919) % n]!.token);
      }),
      go("comments", async (i) => {
        const id = this.recentMoment();
        if (id)
          await this.call(
            "comments",
            "POST",
            `/v1/moments/${id}/comments`,
            this.fleet[(i * 104_729) % n]!.token,
            { body: `soak comment ${i}` },
            keyHeader(),
          );
      }),
      go("feeds", async (i) => {
        await this.call("feeds", "GET", "/v1/moments/feed?limit=20", this.fleet[(i * 31) % n]!.token);
      }),
    ]);
  }

  private recentMoment(): string | undefined {
    return this.recentMoments[Math.floor(Math.random() * this.recentMoments.length)];
  }

  /** A timed, counted send whose body is its key. */
  private async send(
    kind: "direct" | "group",
    key: string,
    receivers: number[],
    token: string,
    path: string,
    extra: Record<string, string>,
  ): Promise<void> {
    this.deliveries.sending(key, receivers);
    const t0 = performance.now();
    const res = await this.call(kind, "POST", path, token, { ...extra, body: key }, keyHeader());
    if (res?.status === 201) {
      this.sendLatency.add(performance.now() - t0);
      this.deliveries.accepted(key, receivers.length);
    } else this.deliveries.failed(key);
  }

  private async call(
    kind: keyof Rates,
    method: string,
    path: string,
    token: string,
    json?: unknown,
    headers?: Record<string, string>,
  ): Promise<RawResponse | undefined> {
    const client = kind === "direct" || kind === "group" ? this.http : this.social;
    const res = await timed(client.request(method, path, token, json, headers), REQUEST_TIMEOUT_MS).catch(
      () => undefined,
    );
    count(this.statuses[kind], res?.status);
    return res;
  }

  /** Stop receiving and close every connection. */
  stop(): void {
    this.running = false;
    for (const c of this.closers) c();
    this.http.close();
    this.social.close();
  }
}

function count(into: Record<string, number>, status: number | undefined): void {
  const k = status === undefined ? "error" : String(status);
  into[k] = (into[k] ?? 0) + 1;
}
