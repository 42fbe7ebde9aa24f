// One WebSocket connection: authentication, decoding and validating client frames, delivering the mailbox
// (unacknowledged messages first, then new ones as wake-ups arrive) with flow control, and the bounded
// outgoing buffer: a client that lets more than MAX_BUFFER pile up is closed with WS_CLOSE.slowConsumer.
import { ClientFrame, type Ref, type ServerFrame, WS_CLOSE } from "../../schema/ws.ts";
import type { Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { isOutage } from "../circuit.ts";
import type { Logger } from "../log.ts";
import type { MailboxEntry } from "../engines/mailbox.ts";
import type { HandOutAfter, HandOutTarget } from "../messaging/handout.ts";
import type { GroupMember } from "../messaging/group-delivery.ts";
import type { Messaging } from "../messaging/hub.ts";
import type { Services } from "../services.ts";
import type { Codec, Encoded } from "./codec.ts";
import type { Realtime } from "./realtime.ts";

/** The part of a uWS WebSocket a session uses (a fake one in unit tests). */
export interface Socket {
  send(data: string | Uint8Array, isBinary?: boolean): number;
  /** uWS topics: a group's messages are published once to the sockets taking it live (GroupChannels). */
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  getBufferedAmount(): number;
  end(code?: number, reason?: string): void;
  cork(cb: () => void): unknown;
}

export interface SessionDeps {
  svc: Services;
  hub: Messaging;
  realtime: Realtime;
  /** What an authenticated client frame does (handlers/ws.ts; runtime/server.ts mounts it). */
  onFrame: FrameHandler;
}

export type FrameHandler = (s: WsSession, frame: Exclude<ClientFrame, { type: "auth" }>, deps: SessionDeps) => Promise<void>;

/** Outgoing bytes allowed to wait for a slow client before it is closed. */
export const MAX_BUFFER = 1024 * 1024;
/** Message delivery pauses above this many waiting bytes and resumes when the socket drains. */
export const HIGH_WATER = 256 * 1024;
/** Idle seconds before the server pings (and twice that before it drops a silent connection). */
export const HEARTBEAT_SECONDS = 30;
/** The largest client message taken; a larger one closes the socket with WS_CLOSE.tooLarge (1009). */
export const MAX_FRAME = 64 * 1024;
const AUTH_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;
const PAGE = 100;
/** Handed-out messages whose wake-up is still to come (to be ignored) kept at most; past it, one costs a fetch. */
const HANDED_MAX = 1024;
/** Offers awaiting their appends at most (a chain); one more is fetched instead. */
const CHAIN_MAX = 16;

/** A message offered for hand-out, and the append's answer once it is in. */
interface Offered {
  id: string;
  /** Its wake-up came before the answer (nothing is left to ignore). */
  woken: boolean;
  /** The answer: the entry handed out, null when it must be fetched; undefined until it comes. */
  answer: MailboxEntry | null | undefined;
}

/** Where a session is with one of its principal's groups. */
interface GroupState {
  live: boolean;
}

export class WsSession implements HandOutTarget, GroupMember {
  principal: Principal | null = null;
  /** The token the session authenticated with (re-checked when its principal's tokens change). */
  token: string | null = null;
  /** When that token expires (ms on the node's clock; Infinity for none): the socket is closed with 4401 then. */
  expiresAt = Number.POSITIVE_INFINITY;
  closed = false;
  /** Threads this session is typing in (a start of its went out and no stop yet): the lapse timer, the members. */
  readonly typing = new Map<string, { timer: NodeJS.Timeout; members: string[] }>();
  /** Settles once presence has been joined (leave waits for it). */
  joined: Promise<void> = Promise.resolve();
  private cursor: string | null = null;
  private pumping = false;
  /** Fetch again once the current pass ends: a wake-up without a message, or a pump asked for meanwhile. */
  private again = false;
  /** Messages woken for during a pass and not (yet) among its fetched entries: fetch again if any remain. */
  private readonly wanted = new Set<string>();
  private stalled = false;
  /**
   * The messages offered for hand-out whose appends have not answered yet, in the order offered (at most
   * CHAIN_MAX): the first is handed out after the cursor, each later one chained on the one before it. No pass
   * starts meanwhile (`deferred` holds it back until the last answer), so the cursor the appends check stays this
   * session's.
   */
  private readonly expecting: Offered[] = [];
  private deferred = false;
  /**
   * An offer of the chain was answered without its entry (or its entry was not written): later entries of the
   * chain are not written either (they are fetched), so the socket never gets a message before an earlier one.
   */
  private chainBroken = false;
  /** Messages handed out before their wake-up came: the wake-up is then ignored. */
  private readonly handedOut = new Set<string>();
  private authenticating = false;
  private opened = false;
  private authTimer: NodeJS.Timeout | undefined;
  private removeWaiter: (() => void) | undefined;
  private removeHandOut: (() => void) | undefined;
  private removeGroups: (() => void) | undefined;
  /** The principal's groups this socket catches up on ("warming") or takes live (subscribed to their topics). */
  private readonly groups = new Map<bigint, GroupState>();
  /** Group catch-ups waiting for the socket to drain. */
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly id: string,
    private readonly ws: Socket,
    readonly codec: Codec,
    private readonly deps: SessionDeps,
    public log: Logger,
  ) {}

  /**
   * Start at once when the upgrade carried credentials, else wait for an auth frame. Called right after
   * the open event, not inside it: a send from inside the open handler of a socket upgraded in a cork
   * (the asynchronous upgrade) can get the fresh socket closed by uWS (uNetworking/uWebSockets#1928).
   */
  open(principal: Principal | null): void {
    if (this.opened) return;
    this.opened = true;
    if (this.closed) return;
    if (principal) {
      void this.start(principal);
      return;
    }
    this.authTimer = setTimeout(() => this.end(WS_CLOSE.authTimeout, "authentication timeout"), AUTH_TIMEOUT_MS);
  }

  send(frame: ServerFrame): boolean {
    return this.write(this.codec.encode(frame));
  }

  sendError(error: string, message: string, ref?: Ref): void {
    this.send({ type: "error", error, message, ref });
  }

  /** An entry's message frame, shared with every connection it goes to (the hub's RecentFrames). */
  private frameOf(e: MailboxEntry): Encoded {
    return this.deps.hub.frames.of(e.id, e.deliveryCount, e.payload).for(this.codec);
  }

  write(e: Encoded): boolean {
    if (this.closed) return false;
    const status = this.ws.send(e.data, e.binary);
    if (status === 2 || this.ws.getBufferedAmount() > MAX_BUFFER) {
      this.end(WS_CLOSE.slowConsumer, "slow consumer");
      return false;
    }
    return true;
  }

  /** Close with a code; the close handler (onClose) does the cleanup. */
  end(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.end(code, reason);
    this.closed = true;
  }

  /**
   * Close with 4401 once the token has expired (checked on every client frame, and by the server's sweep for idle
   * sockets). Returns whether it did.
   */
  endIfExpired(now?: number): boolean {
    if (this.closed || this.expiresAt === Number.POSITIVE_INFINITY) return false;
    if (this.expiresAt > (now ?? this.deps.svc.now())) return false;
    this.end(WS_CLOSE.unauthorized, "token expired");
    return true;
  }

  /** Learn when the session's token expires: from the node's cache of it, else from Postgres again. */
  private watchExpiry(): void {
    const token = this.token;
    if (!token) return;
    const auth = this.deps.svc.auth;
    const at = auth.expiry(token);
    if (at !== undefined) {
      this.expiresAt = at;
      return;
    }
    auth.resolve(token).then(
      () => {
        this.expiresAt = auth.expiry(token) ?? Number.POSITIVE_INFINITY;
      },
      (err: unknown) =>
        isOutage(err) ? this.end(WS_CLOSE.unavailable, "cannot check the token now") : this.end(WS_CLOSE.unauthorized, "token no longer valid"),
    );
  }

  private async start(principal: Principal): Promise<void> {
    clearTimeout(this.authTimer);
    if (this.closed) return;
    this.principal = principal;
    this.watchExpiry();
    this.log = this.log.child({ principal: principal.id });
    // `ready` goes out once this session watches its friends (so no presence change after `ready` is missed),
    // and before any presence or message frame.
    let readySent = false;
    let markReady: () => void = () => {};
    const isReady = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const ready = () => {
      if (readySent) return;
      readySent = true;
      if (!this.closed) {
        this.send({
          type: "ready",
          principal: { id: principal.id, display_name: principal.displayName },
          protocol: this.codec.name,
          heartbeat_seconds: HEARTBEAT_SECONDS,
        });
      }
      markReady();
    };
    this.joined = this.deps.realtime
      .join(this, ready)
      .catch((err) => this.log.warn({ err }, "presence join failed"))
      .finally(ready);
    await isReady;
    if (this.closed) return;
    this.removeWaiter = this.deps.hub.waiters.add(principal.id, (id) => this.wake(id));
    this.removeHandOut = this.deps.hub.handOuts.add(principal.id, this);
    this.removeGroups = this.deps.hub.groups.register(principal.id, this);
    void this.startGroups(principal.id);
    await this.pump();
  }

  /**
   * A message (raw id) reached this principal's mailbox, or (null) the mailbox changed as a whole. While a pass
   * is fetching, a message its entries bring needs no further fetch: under a group send a wake-up often lands
   * while the fetch it would call for is still queued behind another, and half the fetches came back empty.
   */
  wake(id: string | null): void {
    if (id !== null) {
      // handed out (or about to be answered for): no fetch needed
      const exp = this.expecting.find((e) => e.id === id);
      if (exp !== undefined) {
        exp.woken = true;
        return;
      }
      if (this.handedOut.delete(id)) return;
    }
    if (!this.pumping) {
      void this.pump();
      return;
    }
    if (id === null) this.again = true;
    else this.wanted.add(id);
  }

  /**
   * A send on this node is about to append message `id`: take it straight from the append when this connection
   * has delivered everything so far, after its cursor, or chained on the offers still awaiting their appends
   * (runtime/messaging/handout.ts). Not while a pass runs or waits to run (a broken chain, a wake-up for a message
   * not offered): the offers then drain and the pass runs.
   */
  offer(id: string): HandOutAfter | null {
    if (this.closed || this.pumping || this.stalled || this.chainBroken || this.deferred || this.cursor === null) return null;
    if (this.expecting.length >= CHAIN_MAX || this.ws.getBufferedAmount() >= HIGH_WATER) return null;
    const last = this.expecting.at(-1);
    this.expecting.push({ id, woken: false, answer: undefined });
    return last === undefined ? { after: this.cursor } : { afterHanded: last.id };
  }

  /**
   * An append answered for an offered message. Answers are taken in the order of the offers (on a cluster they can
   * arrive out of it): from the first offer on, each answered entry is written at once when it was handed out and
   * every earlier one of the chain was written (no pass ran since the offers, so the cursor is the one the append
   * checked) and the socket is not backed up. Otherwise the chain is broken there, and once the last offer is
   * answered a pass fetches what was not written, as after a wake-up; a pass held back meanwhile runs then too.
   */
  settle(id: string, entry: MailboxEntry | null): void {
    const exp = this.expecting.find((e) => e.id === id && e.answer === undefined);
    if (exp === undefined) return;
    exp.answer = entry;
    if (!exp.woken) {
      if (this.handedOut.size >= HANDED_MAX) this.handedOut.clear();
      this.handedOut.add(id);
    }
    while (this.expecting.length > 0 && this.expecting[0]!.answer !== undefined) {
      const e = this.expecting.shift()!.answer!;
      if (this.closed) continue;
      if (e === null || this.chainBroken || this.ws.getBufferedAmount() >= HIGH_WATER) {
        this.chainBroken = true;
        continue;
      }
      this.ws.cork(() => {
        if (this.write(this.frameOf(e))) this.cursor = e.cursor;
        else this.chainBroken = true;
      });
    }
    if (this.closed || this.expecting.length > 0) return;
    if (this.chainBroken || this.deferred) {
      this.chainBroken = false;
      this.deferred = false;
      void this.pump();
    }
  }

  /** Deliver what the mailbox holds after this connection's cursor, page by page, while the socket keeps up. */
  async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.expecting.length > 0) {
      this.deferred = true;
      return;
    }
    const me = this.principal;
    if (this.closed || !me) return;
    this.pumping = true;
    try {
      do {
        this.again = false;
        this.wanted.clear();
        for (;;) {
          if (this.ws.getBufferedAmount() >= HIGH_WATER) {
            this.stalled = true;
            break;
          }
          this.stalled = false;
          const entries = await this.deps.hub.fetch(me.id, PAGE, this.cursor);
          if (this.wanted.size > 0) for (const e of entries) this.wanted.delete(e.id);
          if (this.closed || entries.length === 0) break;
          this.ws.cork(() => {
            for (const e of entries) {
              if (!this.write(this.frameOf(e))) return;
              this.cursor = e.cursor;
            }
          });
          if (entries.length < PAGE || this.closed) break;
        }
      } while ((this.again || this.wanted.size > 0) && !this.closed && !this.stalled);
    } catch (err) {
      this.log.warn({ err }, "websocket delivery failed; retrying shortly");
      setTimeout(() => void this.pump(), RETRY_MS).unref();
    } finally {
      this.pumping = false;
      this.wanted.clear();
    }
  }

  subscribe(topic: string): void {
    if (!this.closed) this.ws.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  /** Take every group of the principal live, each once caught up past its cursor (runtime/messaging/group-channels.ts). */
  private async startGroups(me: string): Promise<void> {
    try {
      for (const thread of await this.deps.hub.groups.threads(me, false)) this.groupJoined(thread);
    } catch (err) {
      if (this.closed) return;
      this.log.warn({ err }, "groups not read; retrying shortly");
      setTimeout(() => void this.startGroups(me), RETRY_MS).unref();
    }
  }

  groupJoined(thread: bigint): void {
    if (this.closed || !this.principal || this.groups.has(thread)) return;
    this.groups.set(thread, { live: false });
    this.deps.hub.groups.channels.warm(thread);
    void this.catchUp(this.principal.id, thread);
  }

  heldGroups(): Iterable<bigint> {
    return this.groups.keys();
  }

  groupLeft(thread: bigint): void {
    const state = this.groups.get(thread);
    this.groups.delete(thread);
    if (state?.live) this.deps.hub.groups.channels.leave(thread, this);
  }

  /**
   * Write what the principal has not acknowledged in a group, page by page while the socket keeps up, then take the
   * group live from the last number written (GroupChannels.join): everything after it comes once, in order. Before
   * that, the member's delivered_seq is set to LIVE, so a node that dies with this socket leaves every message of the
   * group counted as possibly delivered.
   */
  private async catchUp(me: string, thread: bigint): Promise<void> {
    const groups = this.deps.hub.groups;
    // this catch-up's own state: a leave and a join again while it waits start another, and this one must stop
    const mine = this.groups.get(thread);
    const still = () => !this.closed && mine !== undefined && this.groups.get(thread) === mine && !mine.live;
    let after = 0;
    let marked = false;
    try {
      for (;;) {
        for (;;) {
          await this.drained();
          if (!still()) return groups.channels.cool(thread);
          const b = await groups.backlog(me, [thread], PAGE, after);
          if (!still()) return groups.channels.cool(thread);
          const last = b.last.get(thread);
          if (last === undefined) {
            // no longer a member
            this.groups.delete(thread);
            return groups.channels.cool(thread);
          }
          this.ws.cork(() => {
            for (const e of b.entries) if (!this.write(this.deps.hub.frames.of(e.id, e.deliveryCount, e.payload).for(this.codec))) return;
          });
          if (b.entries.length < PAGE) {
            after = Math.max(after, last);
            break;
          }
          after = b.entries.at(-1)!.seq;
        }
        if (!marked) {
          await groups.mark(me, thread, null);
          marked = true;
          if (!still()) return groups.channels.cool(thread);
        }
        if (!still()) return groups.channels.cool(thread);
        if (groups.channels.join(thread, this, after)) {
          mine!.live = true;
          // a write of the join (the recent messages it was behind by) may have closed the socket
          if (this.closed || this.groups.get(thread) !== mine) groups.channels.leave(thread, this);
          return;
        }
      }
    } catch (err) {
      groups.channels.cool(thread);
      if (!still()) return;
      this.groups.delete(thread);
      this.log.warn({ err, thread: String(thread) }, "group catch-up failed; retrying shortly");
      setTimeout(() => this.groupJoined(thread), RETRY_MS).unref();
    }
  }

  /** Resolves once the socket's buffer is below HIGH_WATER (at once when it is, or when the socket closes). */
  private drained(): Promise<void> {
    if (this.closed || this.ws.getBufferedAmount() < HIGH_WATER) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** The socket drained: resume delivery if it was paused. */
  onDrain(): void {
    if (this.drainWaiters.length > 0 && this.ws.getBufferedAmount() < HIGH_WATER) {
      const waiting = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiting) w();
    }
    if (this.stalled && this.ws.getBufferedAmount() < HIGH_WATER) {
      this.stalled = false;
      void this.pump();
    }
  }

  /** One client frame (the bytes are only valid during this call: decode them before anything async). */
  onMessage(data: ArrayBuffer, upgradedAs: Principal | null): void {
    if (this.closed) return;
    // uWS takes messages up to a higher bound (and cuts the connection above it); this one closes cleanly
    if (data.byteLength > MAX_FRAME) {
      this.end(WS_CLOSE.tooLarge, `message over ${MAX_FRAME / 1024} KiB`);
      return;
    }
    if (this.endIfExpired()) return;
    this.open(upgradedAs);
    let raw: unknown;
    try {
      raw = this.codec.decode(data);
    } catch {
      this.sendError("invalid_request", `frame is not valid ${this.codec.name === "json" ? "JSON" : "MessagePack"}`);
      return;
    }
    const ref = refOf(raw);
    const parsed = ClientFrame.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      this.sendError("invalid_request", `invalid frame: ${where}${issue?.message ?? "unknown shape"}`, ref);
      return;
    }
    const frame = parsed.data;
    if (frame.type === "auth") {
      if (this.principal || this.authenticating) {
        this.sendError("invalid_request", "already authenticated");
        return;
      }
      this.authenticating = true;
      this.token = frame.token;
      this.deps.svc.auth.resolve(frame.token).then(
        (p) => this.start(p),
        (err: unknown) => {
          if (isOutage(err)) {
            this.sendError("unavailable", "cannot check the token now: a backend is unavailable; reconnect shortly");
            this.end(WS_CLOSE.unavailable, "unavailable");
            return;
          }
          this.sendError("unauthorized", "invalid or expired token");
          this.end(WS_CLOSE.unauthorized, "unauthorized");
        },
      );
      return;
    }
    if (!this.principal) {
      this.sendError("unauthorized", "authenticate first: send {\"type\":\"auth\",\"token\":...}", ref);
      if (!this.authenticating) this.end(WS_CLOSE.unauthorized, "unauthorized");
      return;
    }
    this.deps.onFrame(this, frame, this.deps).catch((thrown: unknown) => {
      // a backend out of reach answers `unavailable`, as HTTP answers 503, never `internal` (runtime/circuit.ts)
      const err = this.deps.svc.circuits.trip(thrown) ?? thrown;
      if (err instanceof ApiError) {
        this.sendError(err.code, err.message, ref);
        return;
      }
      this.log.error({ err, frame: frame.type }, "websocket frame failed");
      this.sendError("internal", "internal server error", ref);
    });
  }

  /** The socket is gone (whoever closed it): stop delivery, typing and presence. */
  async onClose(): Promise<void> {
    this.closed = true;
    clearTimeout(this.authTimer);
    this.removeWaiter?.();
    this.removeHandOut?.();
    this.removeGroups?.();
    for (const w of this.drainWaiters) w();
    this.drainWaiters = [];
    const me = this.principal?.id;
    for (const [thread, state] of this.groups) {
      if (!state.live) continue; // a catch-up under way sees the socket closed and stops
      const at = this.deps.hub.groups.channels.leave(thread, this);
      if (me !== undefined && at !== undefined) {
        this.deps.hub.groups.mark(me, thread, at).catch((err: unknown) => this.log.warn({ err }, "group delivery mark not written"));
      }
    }
    this.groups.clear();
    if (this.principal) await this.deps.realtime.leave(this);
  }
}

/** A frame's `ref` as given (a string cut to 64 characters, or a finite number), for its error frame. */
function refOf(raw: unknown): Ref | undefined {
  const ref: unknown = typeof raw === "object" && raw !== null ? (raw as { ref?: unknown }).ref : undefined;
  if (typeof ref === "string") return ref.slice(0, 64);
  if (typeof ref === "number" && Number.isFinite(ref)) return ref;
  return undefined;
}
