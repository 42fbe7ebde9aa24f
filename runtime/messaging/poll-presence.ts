// Presence of the principals that long poll (svc.pollPresence): an agent on the SDK's default transport holds no
// WebSocket, yet its friends see it online while it polls. Each principal polling here is ONE entry in the presence
// engine for this node (`poll.<node process>`, beside its sockets' entries, runtime/ws/presence.ts), whatever the
// number of its polls: the engine then gives the same answer across nodes as for sockets (online while any entry of
// any node lives; the last one gone announces offline). A principal's first poll here connects its entry, behind the
// answer; later polls only note the time, here. One timer for all of them: each POLL_RENEW_MS it renews every entry in
// the engine's one batched refresh (as sockets' entries are refreshed), and each sweep it drops the principals whose
// last poll began more than the grace ago (the longest wait, MAX_WAIT_SECONDS, plus a client's pause between polls)
// and that hold no poll (or since a poll held longer ended), announcing offline when it was the principal's last entry (a socket still open keeps it
// online). Whom a change is told to is presence's rule: the principal's friends (a block ends the friendship). The
// node's stop drops every entry as a socket's close does.
import { randomUUID } from "node:crypto";
import { MAX_WAIT_SECONDS } from "../../schema/messages.ts";
import { authorOf, type Principal } from "../auth.ts";
import type { Core } from "../services.ts";

/** A principal is offline this long after its last poll began: the longest wait and 15 s of pause between polls. */
export const POLL_PRESENCE_GRACE_MS = (MAX_WAIT_SECONDS + 15) * 1000;
/** The engine's entries are renewed this often, all in one call (as sockets' entries are refreshed). */
const POLL_RENEW_MS = 30_000;
/** The engine forgets an entry this long after its renewal (a node that dies): past the grace after any renewal. */
const POLL_ENTRY_TTL_MS = 90_000;
/** Sweeps per grace: a principal whose polls stopped is offline within a grace and a sixth of it. */
const SWEEPS_PER_GRACE = 6;

interface Polling {
  principal: Principal;
  /** When its last poll began, or a poll ended if later (the node's clock). */
  lastPoll: number;
  /** Its polls held now. */
  held: number;
}

export class PollPresence {
  /** This node's one connection id for every polling principal. */
  private readonly connId = `poll.${randomUUID()}`;
  private readonly polling = new Map<string, Polling>();
  private readonly writes = new Set<Promise<void>>();
  private readonly sweepMs: number;
  private timer: NodeJS.Timeout | undefined;
  private renewedAt: number;
  private stopped = false;

  constructor(
    private readonly svc: Pick<Core, "engines" | "announce" | "now" | "log">,
    private readonly graceMs = POLL_PRESENCE_GRACE_MS,
  ) {
    this.sweepMs = Math.max(1, Math.floor(graceMs / SWEEPS_PER_GRACE));
    this.renewedAt = svc.now();
  }

  /** Start the one timer that renews and sweeps, until `stop`. */
  start(): void {
    this.timer = setInterval(() => this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  /** A poll of `principal` begins: it is online. Returns what to call when the poll ends. */
  poll(principal: Principal): () => void {
    if (this.stopped) return () => {};
    const now = this.svc.now();
    let p = this.polling.get(principal.id);
    if (p === undefined) {
      p = { principal, lastPoll: now, held: 0 };
      this.polling.set(principal.id, p);
      this.connect(p, now);
    } else {
      p.principal = principal; // its name or picture as its token says now
      p.lastPoll = now;
    }
    p.held++;
    const held = p;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      held.held--;
      held.lastPoll = this.svc.now(); // seen until now: the grace runs from here too
    };
  }

  /** Principals polling on this node now. */
  get size(): number {
    return this.polling.size;
  }

  /** Stop the timer and drop every entry, announcing offline where it was the last (as sockets closing do). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const all = [...this.polling.values()];
    this.polling.clear();
    await Promise.allSettled([...this.writes]);
    await Promise.allSettled(all.map((p) => this.drop(p.principal)));
  }

  /** Drop the principals past their grace that hold no poll; renew the others in one call when it is due. */
  sweep(): void {
    const now = this.svc.now();
    for (const [id, p] of this.polling) {
      if (p.held > 0 || now - p.lastPoll < this.graceMs) continue;
      this.polling.delete(id);
      this.track(this.drop(p.principal));
    }
    if (now - this.renewedAt < POLL_RENEW_MS || this.polling.size === 0) return;
    this.renewedAt = now;
    const conns = [...this.polling.keys()].map((principal) => ({ principal, connId: this.connId }));
    this.track(
      this.svc.engines.presence
        .refresh(conns, now, POLL_ENTRY_TTL_MS)
        .catch((err) => this.svc.log.warn({ err }, "polling presence not renewed")),
    );
  }

  /** A write or drop behind the answer, which `stop` waits for. */
  private track(w: Promise<void>): void {
    this.writes.add(w);
    void w.finally(() => this.writes.delete(w));
  }

  /** Connect the entry (behind the poll's answer), announcing online when no other entry of the principal lived. */
  private connect(p: Polling, now: number): void {
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
