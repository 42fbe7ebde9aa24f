// One per node: the mailboxes seen through Postgres (a missing mailbox is rebuilt from the deliveries table
// on first fetch), the wake-up subscription and waiter registry, long polling, acks, and the direct-thread
// cache. Built and started by startNode (runtime/server.ts); handlers and the WebSocket channel reach it as svc.hub.
import { appendParts, type MailboxEntry } from "../engines/mailbox.ts";
import type { Core } from "../services.ts";
import { toMessage } from "./payload.ts";
import { Batcher } from "../batcher.ts";
import { unavailable } from "../circuit.ts";
import {
  type AckItem,
  ackBatch,
  type AckOutcome,
  type DirectMessage,
  directThread,
  IdClash,
  insertDirectBatch,
  insertGroupBatch,
  type NewMessage,
  pairKey,
  unacked,
  writeDeliveryCounts,
} from "./store.ts";
import { WriteBehind } from "./write-behind.ts";
import { WaiterRegistry } from "./waiters.ts";
import { type HandOutTarget, HandOuts, RecentFrames } from "./handout.ts";
import { GroupDelivery, groupWaitKey } from "./group-delivery.ts";
import type { GroupEntry } from "./group-store.ts";

const THREAD_CACHE_MAX = 100_000;
/** A send waiting longer than this for its batch to start answers 503 uncommitted (the client may retry it). */
const SEND_MAX_WAIT_MS = 1000;
const REPAIR_RETRY_MS = [100, 500, 2000, 5000];
/**
 * How long a delivery count waits at least (at most twice that): a count an ack soon makes moot (most of them)
 * then costs no write. In a group bench, writing them after 250 ms updated a third of the delivery rows the acks
 * then deleted.
 */
const COUNTS_SETTLE_MS = 500;

export class Messaging {
  readonly waiters = new WaiterRegistry();
  /** WebSocket connections on this node that can take new entries straight from a send (runtime/messaging/handout.ts). */
  readonly handOuts = new HandOuts();
  /** Frames of the messages delivered lately, shared by the connections they go to (hand-outs and fetches alike). */
  readonly frames = new RecentFrames();
  /** Group messages stored once: live delivery to this node's sockets, wake-ups, reads past members' cursors. */
  readonly groups: GroupDelivery;
  /** Delivery counts on their way to Postgres (an ack drops its message's: it no longer matters). */
  private readonly counts: WriteBehind<{ recipient: string; id: string; count: number }>;
  private readonly directWrites: Batcher<DirectMessage, boolean>;
  private readonly groupWrites: Batcher<NewMessage, number | null>;
  private readonly acks: Batcher<AckItem, AckOutcome>;
  /** This node's owner token once it records sends in flight (runtime/messaging/reconcile.ts). */
  private owner: string | undefined;
  /** Messages appended, to drop from the in-flight record (the removals arriving meanwhile go together). */
  private readonly landed: Batcher<string, undefined>;
  private readonly seeding = new Map<string, Promise<void>>();
  /** Acks under way (shutdown lets them finish). */
  private readonly acking = new Set<Promise<boolean>>();
  private readonly threads = new Map<string, bigint>();
  private starting: Promise<void> | undefined;
  private unsubscribe: (() => Promise<void>) | undefined;
  private closing = false;

  constructor(private readonly svc: Core) {
    this.groups = new GroupDelivery(svc, this.frames, this.waiters);
    this.counts = new WriteBehind("delivery counts", (rows) => writeDeliveryCounts(svc.sql, rows), svc.log, {
      everyMs: COUNTS_SETTLE_MS,
      settle: true,
      merge: (a, b) => (a.count >= b.count ? a : b),
    });
    // One statement in flight per kind: what arrives meanwhile waits and goes in the next, bigger batch.
    // Under load that means fewer statements and socket writes (a profile of 2,000 sends/s over WebSocket
    // showed the writes to Postgres as the server's largest single cost with two in flight).
    // A send commits in time to be answered or not at all: a batch is not started while Postgres's circuit is open,
    // an item that waited past SEND_MAX_WAIT_MS (behind a stuck batch) fails without being sent, and the statement
    // itself ends within the statement_timeout (runtime/server.ts): at most ~1 + 2.5 s before a 201 or a 503.
    const maxWait = { ms: SEND_MAX_WAIT_MS, error: () => unavailable("postgres") };
    this.directWrites = new Batcher(async (items) => {
      svc.circuits.postgres.check();
      await this.inFlight(items);
      return insertDirectBatch(svc.sql, items);
    }, 1, 256, maxWait);
    this.groupWrites = new Batcher(async (items) => {
      svc.circuits.postgres.check();
      await this.inFlight(items);
      return insertGroupBatch(svc.sql, items);
    }, 2, 256, maxWait);
    this.landed = new Batcher(async (ids) => {
      if (this.owner !== undefined) await svc.engines.inflight.done(this.owner, ids);
      return ids.map(() => undefined);
    }, 1, 1000);
    this.acks = new Batcher((items) => this.groupAcks(items), 1);
  }

  /**
   * Store a direct message and its delivery (committed with whatever else is being sent). False: recipient gone.
   * An id already taken (an IdClash) gets a new one: `m.id` is then replaced, and is the message's id.
   */
  storeDirect(m: DirectMessage): Promise<boolean> {
    return this.withFreshIdOnClash(m, () => this.directWrites.push(m));
  }

  /** Store a group message (once); its number in the group, or null when the sender is not a member. As storeDirect for `m.id`. */
  storeGroup(m: NewMessage): Promise<number | null> {
    return this.withFreshIdOnClash(m, () => this.groupWrites.push(m));
  }

  private async withFreshIdOnClash<T>(m: NewMessage, store: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await store();
      } catch (err) {
        if (!(err instanceof IdClash) || attempt >= 5) throw err;
        this.svc.log.warn({ id: String(m.id) }, "message id taken (node id clash): stored under a new id");
        m.id = this.svc.ids.nextRaw();
      }
    }
  }

  /**
   * From now on, record each send batch's messages as in flight (under this node's lease owner) before its
   * statement, and drop them once appended: a node that dies between the two leaves them for another to finish.
   */
  trackInFlight(owner: string): void {
    this.owner = owner;
  }

  private async inFlight(items: NewMessage[]): Promise<void> {
    if (this.owner !== undefined) await this.svc.engines.inflight.add(this.owner, items.map((i) => String(i.id)), this.svc.now());
  }

  /** Subscribe to wake-ups (once per node). */
  start(): Promise<void> {
    this.starting ??= (async () => {
      this.unsubscribe = await this.svc.engines.mailboxes.onWake((p, id) => this.waiters.wake(p, id));
      await this.groups.start();
    })();
    return this.starting;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Entries after `cursor` (unacknowledged first when null), oldest first; rebuilds a missing mailbox. */
  async fetch(principal: string, limit: number, cursor: string | null): Promise<MailboxEntry[]> {
    const mb = this.svc.engines.mailboxes;
    let entries = await mb.fetch(principal, limit, cursor);
    if (entries === null) {
      await this.seed(principal);
      entries = (await mb.fetch(principal, limit, cursor)) ?? [];
    }
    for (const e of entries) this.counts.record(`${principal} ${e.id}`, { recipient: principal, id: e.id, count: e.deliveryCount });
    return entries;
  }

  /** Rebuild a principal's mailbox from its unacknowledged deliveries (one rebuild at a time per node). */
  private seed(principal: string): Promise<void> {
    const running = this.seeding.get(principal);
    if (running) return running;
    const mb = this.svc.engines.mailboxes;
    const p = (async () => {
      // This node's delivery counts still waiting go first, so the rows read carry them (other nodes' may lag by up
      // to a second: a mailbox lost counts what it no longer holds as delivered at least once, see MailboxEngine.seed).
      await this.counts.flush();
      // Acks are in Postgres before they are answered; one that lands between this read and the seed is left out
      // by its tombstone, which lasts ackMemoryMs: a read that took half of that is done again.
      let rows: Awaited<ReturnType<typeof unacked>>;
      for (;;) {
        const started = performance.now();
        rows = await unacked(this.svc.sql, principal, mb.capacity + 1);
        if (performance.now() - started < mb.ackMemoryMs / 2) break;
      }
      const entries = rows.slice(0, mb.capacity).map((r) => ({
        id: r.id.toString(),
        payload: JSON.stringify(toMessage(r)),
        deliveryCount: r.delivery_count,
      }));
      await mb.seed(principal, entries, rows.length <= mb.capacity);
    })().finally(() => this.seeding.delete(principal));
    this.seeding.set(principal, p);
    return p;
  }

  /**
   * Long poll: answer at once with whatever is unacknowledged, else wait up to `timeoutMs` for a wake-up.
   * `onAborted` registers what to do when the client goes away: the waiter is released at once.
   */
  async poll(principal: string, limit: number, timeoutMs: number, onAborted: (cb: () => void) => void): Promise<MailboxEntry[]> {
    // Callbacks are inline arrows and the wait's release lives on an object: a named closure would carry
    // its own property store (see runtime/http/pipeline.ts), held for the whole wait.
    const wait: { woken: boolean; stop: boolean; ended: boolean; release: (() => void) | undefined } = { woken: false, stop: false, ended: false, release: undefined };
    const remove = this.waiters.add(principal, () => {
      wait.woken = true;
      wait.release?.();
    });
    onAborted(() => {
      wait.stop = true;
      wait.release?.();
    });
    const deadline = performance.now() + timeoutMs;
    // the principal's groups: their messages are read past its cursors, and wake the poll under the group's key
    const removeGroups: (() => void)[] = [];
    try {
      // the mailbox is read while the groups are learnt (a map hit but for a principal's first poll on this node);
      // each group's waiter is in place before its first read
      const learnt = this.groups.threads(principal).then((groups) => {
        if (wait.ended) return groups;
        for (const thread of groups) {
          removeGroups.push(
            this.waiters.add(groupWaitKey(thread), () => {
              wait.woken = true;
              wait.release?.();
            }),
          );
        }
        return groups;
      });
      for (;;) {
        wait.woken = false;
        const [direct, grouped] = await Promise.all([
          this.fetch(principal, limit, null),
          learnt.then((groups) => (groups.length > 0 ? this.groups.readForPoll(principal, groups, limit) : undefined)),
        ]);
        const entries = grouped === undefined || grouped.length === 0 ? direct : merged(direct, grouped, limit);
        if (entries.length > 0 || wait.stop || this.closing) return entries;
        const left = deadline - performance.now();
        if (left <= 0) return entries;
        if (!wait.woken) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, left);
            wait.release = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wait.release = undefined;
        }
        if (!wait.woken || wait.stop || this.closing) return [];
      }
    } finally {
      wait.ended = true;
      remove();
      for (const r of removeGroups) r();
    }
  }

  /**
   * After the commit of a group message (stored once, numbered `seq` in its group): publish it to the group's live
   * sockets on every node and wake its members' long polls. When pub/sub cannot be reached the message stays in
   * flight, and the reconciler publishes it again (runtime/messaging/reconcile.ts).
   */
  async deliverGroup(thread: bigint, seq: number, rawId: string, payload: string): Promise<void> {
    try {
      await this.groups.deliver(thread, { seq, id: rawId, payload });
    } catch (err) {
      this.svc.log.error({ err, thread: String(thread) }, "group message not published; the reconciler will");
      return;
    }
    if (this.owner !== undefined) {
      this.landed.push(rawId).catch((err: unknown) => this.svc.log.warn({ err }, "in-flight record not updated"));
    }
  }

  /**
   * After the commit: put a message into its recipients' mailboxes, waking them wherever they wait, and hand it
   * straight to the recipients' connections on this node that have delivered everything before it. A big group's
   * recipients are appended in parts (MailboxEngine.appendPart, APPEND_PART), all sent at once: the connections of a
   * part that has answered are written to while Redis runs the next part, and no single script holds Redis for the
   * whole group.
   */
  async deliver(recipients: string[], rawId: string, payload: string): Promise<void> {
    if (recipients.length === 0) return;
    const parts = appendParts(recipients, this.svc.engines.mailboxes.appendPart);
    const appended = await Promise.all(parts.map((part) => this.deliverPart(part, rawId, payload)));
    if (this.owner !== undefined && appended.every(Boolean)) {
      this.landed.push(rawId).catch((err: unknown) => this.svc.log.warn({ err }, "in-flight record not updated"));
    }
  }

  /** Append one part of a message's recipients and settle its hand-outs; false when the append failed. */
  private async deliverPart(recipients: string[], rawId: string, payload: string): Promise<boolean> {
    const offered: [number, HandOutTarget][] = [];
    let handed: (string | null)[] = [];
    let appended = true;
    try {
      const items = recipients.map((principal, i) => {
        const target = this.handOuts.only(principal);
        const from = target?.offer(rawId) ?? null;
        if (from === null) return { principal, id: rawId, payload };
        offered.push([i, target!]);
        return { principal, id: rawId, payload, ...from };
      });
      handed = await this.svc.engines.mailboxes.append(items);
    } catch (err) {
      // The message is durable in Postgres: have the mailboxes rebuilt from it rather than fail the send.
      appended = false;
      this.svc.log.error({ err, recipients: recipients.length }, "mailbox append failed; rebuilding from Postgres");
      for (const r of recipients) void this.repair(r);
    }
    // every offer is answered, whatever one of them does: an offer left open holds its connection's delivery back
    for (const [i, target] of offered) {
      const cursor = handed[i] ?? null;
      const principal = recipients[i]!;
      if (cursor !== null) this.counts.record(`${principal} ${rawId}`, { recipient: principal, id: rawId, count: 1 });
      try {
        target.settle(rawId, cursor === null ? null : { id: rawId, payload, deliveryCount: 1, cursor });
      } catch (err) {
        this.svc.log.warn({ err, principal }, "hand-out failed");
      }
    }
    return appended;
  }

  private async repair(principal: string): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await this.svc.engines.mailboxes.clear(principal);
        return;
      } catch {
        if (this.closing) return;
        await new Promise((r) => setTimeout(r, REPAIR_RETRY_MS[Math.min(i, REPAIR_RETRY_MS.length - 1)]));
      }
    }
  }

  /**
   * Acknowledge, for good before answering (acks arriving while one statement runs go together in the next;
   * committed with synchronous_commit on). A group message stored once moves the member's cursor in Postgres, then
   * in the remembered cursors (groupAcks); `through` takes every earlier message of the group too. Any other message:
   * the delivery row is deleted first, then the entry leaves the mailbox and its tombstone is recorded there (so a
   * rebuild from rows read before the delete does not bring it back); `through` also takes the messages of that
   * thread handed out to the principal before it (MailboxEngine.handedBefore). Any step failing fails the ack (the
   * caller answers an error; a retried ack finds its work done and still succeeds). False when it was never
   * `principal`'s.
   */
  ack(principal: string, rawId: bigint, through = false): Promise<boolean> {
    const p = this.ackNow(principal, rawId, through);
    this.acking.add(p);
    // inline arrows: a named closure per ack would cost a property store each (see runtime/http/pipeline.ts)
    p.then(
      () => this.acking.delete(p),
      () => this.acking.delete(p),
    );
    return p;
  }

  /**
   * One batch of acks in Postgres; then the group cursors it moved are remembered in Redis (or memory), in one call,
   * before any of the batch is answered, so a long poll while Postgres is away never hands out what an answered ack
   * took (GroupDelivery.readForPoll). A failure there fails the batch's acks; retried, they change nothing in Postgres.
   */
  private async groupAcks(items: AckItem[]): Promise<AckOutcome[]> {
    const outcomes = await ackBatch(this.svc.sql, items);
    const writes = [];
    for (let i = 0; i < items.length; i++) {
      const o = outcomes[i];
      if (o === false || o === undefined || o === "delivery") continue;
      const it = items[i]!;
      writes.push({ member: it.recipient, thread: o.thread, acked: o.acked, above: !it.through && o.seq > o.acked ? [o.seq] : [] });
    }
    await this.svc.engines.groupCursors.merge(writes);
    return outcomes;
  }

  private async ackNow(principal: string, rawId: bigint, through: boolean): Promise<boolean> {
    const mb = this.svc.engines.mailboxes;
    const id = rawId.toString();
    const outcome = await this.acks.push({ recipient: principal, id: rawId, through });
    if (outcome === false) return false;
    // a group message stored once: the member's cursor took it (and, through, everything before it), in Postgres and
    // then in the remembered cursors, in the batch (groupAcks)
    if (outcome !== "delivery") return true;
    // a cumulative ack of a mailbox entry takes what its reader was handed before it in that thread (its entry is
    // still in the mailbox: it leaves below)
    const earlier = through ? await mb.handedBefore(principal, id) : [];
    if (earlier.length > 0) await Promise.all(earlier.map((e) => this.acks.push({ recipient: principal, id: BigInt(e) })));
    const ids = [id, ...earlier];
    for (const e of ids) this.counts.forget(`${principal} ${e}`);
    await Promise.all(ids.map((e) => mb.ack(principal, e)));
    return true;
  }

  /** The direct thread of a pair (cached: it never changes); null when `to` does not exist. */
  async directThread(me: string, to: string): Promise<bigint | null> {
    const key = pairKey(me, to);
    const hit = this.threads.get(key);
    if (hit !== undefined) return hit;
    const id = await directThread(this.svc.sql, me, to, this.svc.ids.nextRaw());
    if (id !== null) {
      if (this.threads.size >= THREAD_CACHE_MAX) this.threads.clear();
      this.threads.set(key, id);
    }
    return id;
  }

  forgetDirectThread(me: string, to: string): void {
    this.threads.delete(pairKey(me, to));
  }

  /** Write the delivery counts waiting for their next batch now. */
  async flushWrites(): Promise<void> {
    await this.counts.flush();
  }

  /** Shutting down: every long poll waiting, and every one that comes after, answers what it has at once. */
  release(): void {
    this.closing = true;
    this.waiters.wakeAll();
  }

  /**
   * Release every long poll, let the writes already taken finish (acks that arrived as WebSocket frames before the
   * sockets closed among them; bounded by the shutdown grace), write the counts still waiting, drop the subscription.
   */
  async close(): Promise<void> {
    this.release();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.directWrites.drain(), this.groupWrites.drain(), Promise.allSettled([...this.acking]), this.acks.drain()]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.svc.config.FLOCK_SHUTDOWN_GRACE * 1000);
      }),
    ]);
    clearTimeout(timer);
    await this.flushWrites();
    await this.groups.close();
    await this.unsubscribe?.().catch(() => {});
  }
}

/**
 * A long poll's answer: the mailbox's entries and the groups' (each group's in its own order, contiguous from its
 * cursor), merged oldest first by id, at most `limit`.
 */
function merged(direct: MailboxEntry[], grouped: GroupEntry[], limit: number): MailboxEntry[] {
  // a merge of ordered runs (the mailbox's, and each group's in its numbers' order, which within a group can differ
  // from id order): each run stays in its order, and the cut at `limit` drops only the ends of runs, so what a poll
  // gets of a group is still contiguous from the cursor
  const runs: MailboxEntry[][] = [direct];
  let run: MailboxEntry[] = [];
  let thread: bigint | undefined;
  for (const e of grouped) {
    if (e.thread !== thread) {
      run = [];
      runs.push(run);
      thread = e.thread;
    }
    run.push({ id: e.id, payload: e.payload, deliveryCount: e.deliveryCount, cursor: "" });
  }
  const at = runs.map(() => 0);
  const older = (a: string, b: string) => a.length < b.length || (a.length === b.length && a < b);
  const out: MailboxEntry[] = [];
  while (out.length < limit) {
    let pick = -1;
    for (let r = 0; r < runs.length; r++) {
      const head = runs[r]![at[r]!];
      if (head !== undefined && (pick < 0 || older(head.id, runs[pick]![at[pick]!]!.id))) pick = r;
    }
    if (pick < 0) break;
    out.push(runs[pick]![at[pick]!++]!);
  }
  return out;
}
