// One per node: sends (stored in batches, then published to their streams), long polls, acks, and the direct-thread
// cache. Every inbox and every group is a stream of numbered messages, read past a member's cursor and taken live by
// sockets (runtime/messaging/streams.ts). Built and started by startNode (runtime/server.ts); handlers and the
// WebSocket channel reach it as svc.hub.
import type { Core } from "../services.ts";
import { Batcher } from "../batcher.ts";
import { isOutage, outcomeUnknown, unavailable } from "../circuit.ts";
import { type Observe, since, timed } from "../metrics.ts";
import { RedeliveryBackoff } from "./redelivery-backoff.ts";
import { ApiError } from "../errors.ts";
import type { AckItem, AckOutcome } from "./acks-store.ts";
import type { CoreStores } from "./core-stores.ts";
import { postgresStores } from "./core-stores-postgres.ts";
import { pairKey } from "./direct-threads-store.ts";
import { type DirectMessage, IdClash, type NewMessage } from "./messages-store.ts";
import type { CursorWrite } from "../engines/stream-cursors.ts";
import { WaiterRegistry } from "./waiters.ts";
import { RecentFrames } from "./channels.ts";
import { StreamDelivery } from "./streams.ts";
import { hideBlocked } from "./hidden.ts";
import { isGroupStream } from "./stream-id.ts";
import type { PollRead, Published } from "./stream-store.ts";
import type { CommitKind } from "../tracing.ts";

const THREAD_CACHE_MAX = 100_000;
/** A send waiting longer than this for its batch to start answers 503 uncommitted (the client may retry it). */
const SEND_MAX_WAIT_MS = 1000;
/**
 * Most acks one statement takes, per lane. Socket acks come in floods (a big group's members ack each message at
 * once: 999 acks a send), taken in big statements; an HTTP ack has a lane of its own, so it never waits behind a
 * flood (at 256 a statement in one lane the node committed ~9,000 acks a second against ~25,000 deliveries, and an
 * HTTP ack waited behind the queue for seconds: bench/RESULTS.md, "The mixed-load ack stall").
 */
const ACK_BATCH_MAX = { request: 256, socket: 1024 };
/** Where an ack came from: its own request (HTTP), or a WebSocket frame (its lane is shared with every socket's). */
export type AckLane = keyof typeof ACK_BATCH_MAX;
/** How long a send whose commit's outcome was not heard tries to read back whether it committed. */
const OUTCOME_READ_MS = 700;

/** A send whose commit may or may not have happened (Postgres went away during it and did not come back in time). */
function unknownOutcome(): ApiError {
  return new ApiError(
    "unavailable",
    "Postgres went away while this message was being stored: it may have been stored; retry with the same Idempotency-Key, which answers the stored message if it was",
    { retry_after: 1, stored: "unknown" },
    { "Retry-After": "1" },
  );
}

export class Messaging {
  readonly waiters = new WaiterRegistry();
  /** Frames of the messages delivered lately, shared by the connections they go to. */
  readonly frames = new RecentFrames();
  /** Every inbox and group: live delivery to this node's sockets, wake-ups, reads past members' cursors. */
  readonly streams: StreamDelivery;
  private readonly directWrites: Batcher<DirectMessage, number | null>;
  private readonly groupWrites: Batcher<NewMessage, number | null>;
  /** The acks of requests and those of sockets, each batched on its own (ACK_BATCH_MAX). */
  private readonly acks: Record<AckLane, Batcher<AckItem, AckOutcome>>;
  /** Acks under way (shutdown lets them finish). */
  private readonly acking = new Set<Promise<boolean>>();
  private readonly threads = new Map<string, bigint>();
  /** Long polls of members whose acks fail wait before handing out again. */
  private readonly redelivery: RedeliveryBackoff;
  private starting: Promise<void> | undefined;
  private closing = false;
  /** Long polls waiting for a message now (the queue gauges read it). */
  private pollsWaiting = 0;
  /** The long polls under way, by principal: a suspension ends them at once (endPolls). */
  private readonly pollsOf = new Map<string, Set<{ stop: boolean; release: (() => void) | undefined }>>();

  constructor(
    private readonly svc: Core,
    /** What it reads and writes (runtime/messaging/core-stores.ts): Postgres on `svc.sql` unless given. */
    private readonly stores: CoreStores = postgresStores(svc.sql),
  ) {
    this.streams = new StreamDelivery(svc, stores.streams, this.frames, this.waiters);
    // a principal's tokens changed on some node (a suspension among them): its long polls here answer at once
    svc.auth.onForget((principal) => void this.endPolls(principal));
    // on the node's clock, the one tests move by hand
    this.redelivery = new RedeliveryBackoff(svc.now);
    // One statement in flight per kind (per lane for acks): what arrives meanwhile waits and goes in the next, bigger batch.
    // Under load that means fewer statements and socket writes (a profile of 2,000 sends/s over WebSocket
    // showed the writes to Postgres as the server's largest single cost with two in flight).
    // A send commits in time to be answered or not at all: a batch is not started while Postgres's circuit is open,
    // an item that waited past SEND_MAX_WAIT_MS (behind a stuck batch) fails without being sent, and the statement
    // itself ends within the statement_timeout (runtime/server.ts): at most ~1 + 2.5 s before a 201 or a 503.
    const maxWait = { ms: SEND_MAX_WAIT_MS, error: () => unavailable("postgres") };
    const m = svc.metrics;
    /** A kind's batch, in the trace of each of its sends when tracing is on (off: the batch itself, nothing added). */
    const traced = <T extends NewMessage>(
      kind: CommitKind,
      batch: (items: T[]) => Promise<(number | null | Error)[]>,
    ) => {
      const t = svc.tracing;
      return t === undefined ? batch : (items: T[]) => t.commit(kind, items, () => batch(items));
    };
    /** One kind's batcher: the batch's size, its statement and the time to the commit measured. */
    const writes = <T extends NewMessage>(
      kind: CommitKind,
      statement: Observe,
      insert: (items: T[]) => Promise<(number | null | Error)[]>,
      parallel: number,
    ) =>
      new Batcher<T, number | null>(
        traced(kind, async (items) => {
          svc.circuits.postgres.check();
          // its publish needs Redis: while Redis is known to be out, 503 before anything is committed (no round trip)
          svc.circuits.redis?.check();
          const started = performance.now();
          m.sendBatch[kind].observe(items.length);
          const out = await this.outcome(items, () => timed(statement, () => insert(items)));
          m.sendCommit[kind].observe(since(started));
          return out;
        }),
        parallel,
        256,
        maxWait,
      );
    this.directWrites = writes<DirectMessage>(
      "direct",
      m.postgres.sendDirect,
      (items) => stores.sends.storeDirect(items),
      1,
    );
    this.groupWrites = writes<NewMessage>("group", m.postgres.sendGroup, (items) => stores.sends.storeGroup(items), 2);
    this.acks = {
      request: new Batcher((items) => this.ackStored(items), 1, ACK_BATCH_MAX.request),
      socket: new Batcher((items) => this.ackStored(items), 1, ACK_BATCH_MAX.socket),
    };
  }

  /**
   * Store a direct message, numbered in its recipient's inbox (committed with whatever else is being sent); its
   * number, or null when the recipient is gone. An id already taken (an IdClash) gets a new one: `m.id` is then
   * replaced, and is the message's id.
   */
  storeDirect(m: DirectMessage): Promise<number | null> {
    this.svc.tracing?.batched(m);
    return this.withFreshIdOnClash(m, () => this.directWrites.push(m));
  }

  /** Store a group message (once); its number in the group, or null when the sender is not a member. As storeDirect for `m.id`. */
  storeGroup(m: NewMessage): Promise<number | null> {
    this.svc.tracing?.batched(m);
    return this.withFreshIdOnClash(m, () => this.groupWrites.push(m));
  }

  /**
   * Store a batch, and answer what truly happened to it. When the connection drops while the statement runs (the
   * commit's outcome is not heard: it may have committed), read back which messages are there once Postgres answers,
   * within the send's deadline: those committed answer their numbers (201), the rest 503 (never committed). When
   * Postgres does not answer in time, each fails with `unknownOutcome` (a 503 that says so: retry with the same
   * Idempotency-Key, which finds the message if it was stored).
   */
  private async outcome(
    items: NewMessage[],
    store: () => Promise<(number | null | Error)[]>,
  ): Promise<(number | null | Error)[]> {
    try {
      return await store();
    } catch (err) {
      if (!outcomeUnknown(err)) throw err;
      // bounded by the clock, not by attempts: an attempt may itself wait for a connection that does not come
      const until = performance.now() + OUTCOME_READ_MS;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, OUTCOME_READ_MS, undefined)));
      try {
        for (;;) {
          const there = await Promise.race([
            this.stores.sends.committed(items.map((i) => i.id)).catch(() => null),
            late,
          ]);
          if (there === undefined || (there === null && performance.now() >= until))
            return items.map(() => unknownOutcome());
          if (there !== null) {
            this.svc.log.warn(
              { code: (err as { code: string }).code, committed: there.size, sent: items.length },
              "a send batch's connection dropped during its statement: read back what committed",
            );
            return items.map((i) => there.get(i.id.toString()) ?? unavailable("postgres"));
          }
          await Promise.race([new Promise((r) => setTimeout(r, 100)), late]);
        }
      } finally {
        clearTimeout(timer);
      }
    }
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
   * What waits on this node now, for the queue gauges (runtime/queue-depths.ts): sends and acks held by their batchers,
   * long polls waiting for a message, members whose polls are held back. Lengths and counts: nothing is walked.
   */
  queued(): { direct: number; group: number; acks: number; polls: number; backoff: number } {
    return {
      direct: this.directWrites.pending,
      group: this.groupWrites.pending,
      acks: this.acks.request.pending + this.acks.socket.pending,
      polls: this.pollsWaiting,
      backoff: this.redelivery.size,
    };
  }

  /** Subscribe to the streams' pub/sub (once per node). */
  start(): Promise<void> {
    this.starting ??= this.streams.start();
    return this.starting;
  }

  /**
   * Long poll: answer at once with whatever is unacknowledged in the principal's inbox and groups, else wait up to
   * `timeoutMs` for a message in one of them. `onAborted` registers what to do when the client goes away: the waiter
   * is released at once.
   */
  /**
   * Whose group messages each principal does not take (those it blocked: runtime/social/blocks.ts), set by startNode;
   * unset, every message is handed out.
   */
  hiddenSenders: ((member: string) => Promise<ReadonlySet<string>>) | undefined;

  async poll(
    principal: string,
    limit: number,
    timeoutMs: number,
    onAborted: (cb: () => void) => void,
  ): Promise<PollRead> {
    // Callbacks are inline arrows and the wait's release lives on an object: a named closure would carry
    // its own property store (see runtime/http/pipeline.ts), held for the whole wait.
    const wait: { woken: boolean; stop: boolean; release: (() => void) | undefined } = {
      woken: false,
      stop: false,
      release: undefined,
    };
    onAborted(() => {
      wait.stop = true;
      wait.release?.();
    });
    let mine = this.pollsOf.get(principal);
    if (mine === undefined) this.pollsOf.set(principal, (mine = new Set()));
    mine.add(wait);
    const deadline = performance.now() + timeoutMs;
    const removers: (() => void)[] = [];
    let expired = 0;
    const polls = this.svc.metrics.connections.long_poll;
    polls.inc();
    try {
      // each stream's waiter is in place before its first read
      const streams = await this.streams.streamsOf(principal);
      for (const stream of streams) {
        removers.push(
          this.waiters.add(stream, () => {
            wait.woken = true;
            wait.release?.();
          }),
        );
      }
      for (;;) {
        wait.woken = false;
        // while this member's acks fail, hand out again only after a backoff (RedeliveryBackoff)
        const hold = this.redelivery.holdMs(principal);
        if (hold > 0) {
          // a wake-up does not end it (new messages would bring the old ones back at once); an abort or a close does
          const until = performance.now() + hold;
          for (let left = Math.min(until, deadline) - performance.now(); left > 0 && !wait.stop && !this.closing;) {
            await this.pause(left, wait);
            left = Math.min(until, deadline) - performance.now();
          }
          if (until > deadline || wait.stop || this.closing) return { entries: [], expired };
        }
        const read = await this.streams.reads.readForPoll(principal, streams, limit);
        expired += read.expired;
        // group messages of senders the principal blocked are hidden from it: acknowledged for it, and read on past
        if (this.hiddenSenders !== undefined && read.entries.some((e) => isGroupStream(e.stream))) {
          const hidden = await this.hiddenSenders(principal).catch(() => null);
          if (hidden === null) {
            // whom it blocked is out of reach (Postgres is, and this node holds no copy): its group messages wait
            // for Postgres to come back; its inbox, which a block never reaches (a blocked send is refused), is served
            read.entries = read.entries.filter((e) => !isGroupStream(e.stream));
          } else {
            const shown = await hideBlocked(read.entries, hidden, (id) => this.ack(principal, id));
            if (shown.length === 0 && expired === 0 && !wait.stop && !this.closing) continue;
            read.entries = shown;
          }
        }
        if (read.entries.length > 0) {
          this.redelivery.handedOut(principal);
          this.countHandedOut(read.entries);
        }
        // messages gone past retention are news too: the reader learns of them at once
        if (read.entries.length > 0 || expired > 0 || wait.stop || this.closing)
          return { entries: read.entries, expired };
        const left = deadline - performance.now();
        if (left <= 0) return { entries: read.entries, expired };
        // a wait needs the wake-ups Redis carries between nodes: while it is out of reach, say so rather than wait blind
        this.svc.circuits.redis?.check();
        if (!wait.woken) {
          this.pollsWaiting++;
          try {
            await this.pause(left, wait);
          } finally {
            this.pollsWaiting--;
          }
        }
        if (!wait.woken || wait.stop || this.closing) return { entries: [], expired };
      }
    } finally {
      polls.dec();
      for (const r of removers) r();
      mine.delete(wait);
      if (mine.size === 0 && this.pollsOf.get(principal) === mine) this.pollsOf.delete(principal);
    }
  }

  /**
   * End the long polls `principal` has waiting on this node: each answers what it has at once (a suspension:
   * handlers/messages.ts then checks the token again, and a suspended principal's poll answers 403). How many.
   */
  endPolls(principal: string): number {
    const mine = this.pollsOf.get(principal);
    if (mine === undefined) return 0;
    for (const w of mine) {
      w.stop = true;
      w.release?.();
    }
    return mine.size;
  }

  /** A long poll's answer: its messages delivered, those handed out before redelivered. */
  private countHandedOut(entries: readonly { deliveryCount: number }[]): void {
    const m = this.svc.metrics;
    m.delivered.long_poll.inc(entries.length);
    let again = 0;
    for (const e of entries) if (e.deliveryCount > 1) again++;
    if (again > 0) m.redelivered.long_poll.inc(again);
  }

  /**
   * After the commit of a message (numbered `m.seq` in its stream): publish it to the stream's live sockets on every
   * node and wake its long polls. When Redis cannot be reached, this node's sockets and polls have it already, and
   * the other nodes' position checks find it in Postgres (runtime/messaging/position-check.ts): the send is answered.
   */
  async deliver(m: Published): Promise<void> {
    try {
      await this.streams.deliver(m);
    } catch (err) {
      // Redis gone: the sends after this one answer 503 until it is back (their batches check its circuit)
      this.svc.circuits.trip(err);
      this.svc.log.error({ err, stream: m.key }, "message not published; other nodes' position checks will find it");
    }
  }

  /** Wait `ms`, or less when the poll is woken, aborted or the node closes (`wait.release`). */
  private async pause(ms: number, wait: { release: (() => void) | undefined }): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wait.release = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wait.release = undefined;
  }

  /**
   * Acknowledge, for good before answering (acks arriving while one statement runs go together in the next;
   * committed with synchronous_commit on): the member's cursor in the message's stream takes it (`through`: with every
   * earlier message of that stream), in Postgres; its copy in the remembered cursors is sent as it is answered
   * (ackStored). The statement failing fails the ack (the caller answers an error; a retried ack finds its work done
   * and still succeeds). `lane`: a WebSocket frame's ack goes with the sockets' (ACK_BATCH_MAX). False when it was never `principal`'s. A message past retention's horizon is gone for everyone, its cursor moved over it: its ack
   * is done (the id is a time, so saying so tells nothing about whose it was).
   */
  ack(principal: string, rawId: bigint, through = false, lane: AckLane = "request"): Promise<boolean> {
    if (rawId < this.svc.horizons.messages()) return Promise.resolve(true);
    const p = this.acks[lane].push({ recipient: principal, id: rawId, through }).then(
      (o) => {
        this.redelivery.ackDone(principal);
        if (o === false) return false;
        this.svc.metrics.acks.inc();
        return true;
      },
      (err: unknown) => {
        if (isOutage(err)) this.redelivery.ackFailed(principal);
        throw err;
      },
    );
    this.acking.add(p);
    // inline arrows: a named closure per ack would cost a property store each (see runtime/http/pipeline.ts)
    p.then(
      () => this.acking.delete(p),
      () => this.acking.delete(p),
    );
    return p;
  }

  /**
   * One batch of acks in Postgres (the batch's only round trip before it is answered); then the cursors it moved are
   * sent to the remembered cursors in Redis (or memory) in one call, on the wire before any of the batch is answered,
   * its reply not waited for (CursorCopies: a copy that fails is held and sent again). A long poll reads the logs past those
   * cursors only once Postgres has been out for a margin and none of its member's copies is under way on this node
   * (StreamReads.readForPoll), so it does not hand out what an answered ack took.
   */
  private async ackStored(items: AckItem[]): Promise<AckOutcome[]> {
    const m = this.svc.metrics;
    const outcomes = await timed(m.postgres.ack, () => this.stores.streams.ack(items));
    const writes: CursorWrite[] = [];
    for (let i = 0; i < items.length; i++) {
      const o = outcomes[i];
      if (o === false || o === undefined) continue;
      const it = items[i]!;
      writes.push({
        member: it.recipient,
        thread: o.thread,
        acked: o.acked,
        above: !it.through && o.seq > o.acked ? [o.seq] : [],
      });
    }
    // answered once the copy has left (not landed): a poll served from the logs on another node reads it after
    await this.streams.reads.copies.write(writes);
    return outcomes;
  }

  /** The direct thread of a pair (cached: it never changes); null when `to` does not exist. */
  async directThread(me: string, to: string): Promise<bigint | null> {
    const key = pairKey(me, to);
    const hit = this.threads.get(key);
    if (hit !== undefined) return hit;
    const id = await this.stores.sends.directThread(me, to, this.svc.ids.nextRaw());
    if (id !== null) {
      if (this.threads.size >= THREAD_CACHE_MAX) this.threads.clear();
      this.threads.set(key, id);
    }
    return id;
  }

  forgetDirectThread(me: string, to: string): void {
    this.threads.delete(pairKey(me, to));
  }

  /** Shutting down: every long poll waiting, and every one that comes after, answers what it has at once. */
  release(): void {
    this.closing = true;
    this.waiters.wakeAll();
  }

  /**
   * Release every long poll, let the writes already taken finish (acks that arrived as WebSocket frames before the
   * sockets closed among them; bounded by the shutdown grace), then close the streams (their marks, the subscription).
   */
  async close(): Promise<void> {
    this.release();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([
        this.directWrites.drain(),
        this.groupWrites.drain(),
        Promise.allSettled([...this.acking]),
        this.acks.request.drain(),
        this.acks.socket.drain(),
      ]),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.svc.config.FLOCK_SHUTDOWN_GRACE * 1000);
      }),
    ]);
    clearTimeout(timer);
    await this.streams.close();
  }
}
