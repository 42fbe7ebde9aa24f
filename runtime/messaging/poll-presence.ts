// Presence of the principals that long poll (svc.pollPresence): an agent on the SDK's default transport holds no
// WebSocket, yet its friends see it online while it polls. Each principal polling here is ONE entry in the presence
// engine for this node (`poll.<node process>`, beside its sockets' entries, runtime/ws/presence.ts), whatever the
// number of its polls: the engine then gives the same answer across nodes as for sockets (online while any entry of
// any node lives; the last one gone announces offline). Every poll renews the entry here, in memory; the engine is
// written only at the principal's first poll on this node and then at most every POLL_RENEW_MS, behind the answer, so
// a fresh entry costs a poll no round trip (test/round-trips.test.ts). One timer per principal (one map, not a timer
// per request) expires it POLL_PRESENCE_GRACE_MS after its last poll began, longer than the longest wait
// (MAX_WAIT_SECONDS) plus a client's pause between polls; a poll still held then keeps it. Expiry drops the entry and
// announces offline when it was the principal's last (a socket still open keeps it online). Whom a change is told to is
// presence's rule: the principal's friends (a block ends the friendship). The node's stop drops every entry as a
// socket's close does.
import { randomUUID } from "node:crypto";
import { MAX_WAIT_SECONDS } from "../../schema/messages.ts";
import { authorOf, type Principal } from "../auth.ts";
import type { Core } from "../services.ts";

/** A principal is offline this long after its last poll began: the longest wait and 15 s of pause between polls. */
export const POLL_PRESENCE_GRACE_MS = (MAX_WAIT_SECONDS + 15) * 1000;
/** The engine's entry is renewed at most this often (as sockets' entries are refreshed). */
const POLL_RENEW_MS = 30_000;
/** The engine forgets an entry this long after its renewal (a node that dies): past the grace after any renewal. */
const POLL_ENTRY_TTL_MS = 90_000;

interface Polling {
  principal: Principal;
  /** When its last poll began (the node's clock). */
  lastPoll: number;
  /** When the engine's entry was last written. */
  renewedAt: number;
  /** Its polls held now. */
  held: number;
  timer: NodeJS.Timeout;
}

export class PollPresence {
  /** This node's one connection id for every polling principal. */
  private readonly connId = `poll.${randomUUID()}`;
  private readonly polling = new Map<string, Polling>();
  private readonly writes = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly svc: Pick<Core, "engines" | "announce" | "now" | "log">,
    private readonly graceMs = POLL_PRESENCE_GRACE_MS,
  ) {}

  /** A poll of `principal` begins: it is online. Returns what to call when the poll ends. */
  poll(principal: Principal): () => void {
    if (this.stopped) return () => {};
    const now = this.svc.now();
    let p = this.polling.get(principal.id);
    if (p === undefined) {
      p = { principal, lastPoll: now, renewedAt: now, held: 0, timer: this.arm(principal.id, this.graceMs) };
      this.polling.set(principal.id, p);
      this.write(p, now);
    } else {
      p.principal = principal; // its name or picture as its token says now
      p.lastPoll = now;
      if (now - p.renewedAt >= POLL_RENEW_MS) this.write(p, now);
    }
    p.held++;
    const held = p;
    let ended = false;
    return () => {
      if (!ended) held.held--;
      ended = true;
    };
  }

  /** Principals polling on this node now. */
  get size(): number {
    return this.polling.size;
  }

  /** Stop the timers and drop every entry, announcing offline where it was the last (as sockets closing do). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.polling.values()];
    this.polling.clear();
    for (const p of all) clearTimeout(p.timer);
    await Promise.allSettled([...this.writes]);
    await Promise.allSettled(all.map((p) => this.drop(p.principal)));
  }

  private arm(id: string, ms: number): NodeJS.Timeout {
    const t = setTimeout(() => this.expire(id), ms);
    t.unref();
    return t;
  }

  /** Its grace is up unless a poll came (or is held) meanwhile: then the timer waits on, renewing when due. */
  private expire(id: string): void {
    const p = this.polling.get(id);
    if (p === undefined) return;
    const now = this.svc.now();
    const left = this.graceMs - (now - p.lastPoll);
    if (p.held > 0 || left > 0) {
      if (now - p.renewedAt >= POLL_RENEW_MS) this.write(p, now);
      p.timer = this.arm(id, p.held > 0 ? this.graceMs : Math.min(left, this.graceMs));
      return;
    }
    this.polling.delete(id);
    this.track(this.drop(p.principal));
  }

  /** A write or drop behind the answer, which `stop` waits for. */
  private track(w: Promise<void>): void {
    this.writes.add(w);
    void w.finally(() => this.writes.delete(w));
  }

  /** Write the entry (behind the poll's answer); its first write announces online when no other entry lived. */
  private write(p: Polling, now: number): void {
    p.renewedAt = now;
    const w = (async () => {
      const cameOnline = await this.svc.engines.presence.connect(p.principal.id, this.connId, now, POLL_ENTRY_TTL_MS);
      if (cameOnline) await this.svc.announce.presence({ ...authorOf(p.principal), status: "online" });
    })().catch((err) => this.svc.log.warn({ err, principal: p.principal.id }, "polling presence not written"));
    this.track(w);
  }

  private async drop(principal: Principal): Promise<void> {
    try {
      const wentOffline = await this.svc.engines.presence.disconnect(principal.id, this.connId, this.svc.now());
      if (wentOffline) await this.svc.announce.presence({ ...authorOf(principal), status: "offline" });
    } catch (err) {
      this.svc.log.warn({ err, principal: principal.id }, "polling presence not dropped");
    }
  }
}
