// One WebSocket connection: authentication, decoding and validating client frames, the flow control its principal's
// streams are delivered under (the inbox and each group: what is unacknowledged first, then live from the stream's
// topic, runtime/messaging/catch-up.ts), and the bounded outgoing buffer: a client that lets more than MAX_BUFFER pile
// up is closed with WS_CLOSE.slowConsumer.
import { AckRetries } from "./ack-retries.ts";
import { ClientFrame, FRAME_SCOPES, type Ref, type ServerFrame, WS_CLOSE } from "../../schema/ws.ts";
import { authorOf, grants, type Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { isOutage } from "../circuit.ts";
import type { Logger } from "../log.ts";
import { SocketStreams, type StreamSocket } from "../messaging/catch-up.ts";
import type { Messaging } from "../messaging/hub.ts";
import type { Services } from "../services.ts";
import type { Codec, Encoded } from "./codec.ts";
import type { Realtime } from "./realtime.ts";

/** The part of a uWS WebSocket a session uses (a fake one in unit tests). */
export interface Socket {
  send(data: string | Uint8Array, isBinary?: boolean): number;
  /** uWS topics: a stream's messages are published once to the sockets taking it live (Channels). */
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  getBufferedAmount(): number;
  end(code?: number, reason?: string): void;
  cork(cb: () => void): unknown;
}

export interface SessionDeps {
  svc: Pick<Services, "auth" | "circuits" | "metrics" | "now" | "slow">;
  hub: Messaging;
  realtime: Realtime;
  /** What an authenticated client frame does (handlers/ws.ts; runtime/server.ts mounts it). */
  onFrame: FrameHandler;
  /** Seconds between the server's heartbeats on this kind of connection, as the ready frame tells (HEARTBEAT_SECONDS when unset; SSE's comment pings are more frequent). */
  heartbeatSeconds?: number;
}

export type FrameHandler = (
  s: WsSession,
  frame: Exclude<ClientFrame, { type: "auth" }>,
  deps: SessionDeps,
) => Promise<void>;

/** Outgoing bytes allowed to wait for a slow client before it is closed. */
export const MAX_BUFFER = 1024 * 1024;
/** Message delivery pauses above this many waiting bytes and resumes when the socket drains. */
export const HIGH_WATER = 256 * 1024;
/** Idle seconds before the server pings (and twice that before it drops a silent connection). */
export const HEARTBEAT_SECONDS = 30;
/** The largest client message taken; a larger one closes the socket with WS_CLOSE.tooLarge (1009). */
export const MAX_FRAME = 64 * 1024;
const AUTH_TIMEOUT_MS = 10_000;
/** A thread a session is typing in: when its start lapses, and whom its stop goes to. */
interface Typist {
  timer: NodeJS.Timeout;
  members: string[];
}
/** The `joined` of a session not joining yet: one settled promise shared by all. */
const SETTLED: Promise<void> = Promise.resolve();

/** A token refused because its principal is suspended (runtime/moderation/): the socket closes with 4403. */
const isSuspension = (err: unknown): err is ApiError => err instanceof ApiError && err.code === "suspended";

/**
 * A session's life: upgraded, its open event not handled yet; open and waiting for an auth frame; checking a token;
 * started (authenticated: delivering, presence joined or joining); closed (by either side).
 */
type Life = "upgraded" | "awaitingAuth" | "authenticating" | "started" | "closed";

export class WsSession implements StreamSocket {
  principal: Principal | null = null;
  /** The token the session authenticated with (re-checked when its principal's tokens change). */
  token: string | null = null;
  /** When that token expires (ms on the node's clock; Infinity for none): the socket is closed with 4401 then. */
  expiresAt = Number.POSITIVE_INFINITY;
  life: Life = "upgraded";
  /** Settles once presence has been joined (leave waits for it). */
  joined: Promise<void> = SETTLED;
  private authTimer: NodeJS.Timeout | undefined;
  /** The retries of refused acks, made by the first ack refused (during an outage only). */
  private acks: AckRetries | undefined;
  /** Its principal's streams, once it has one: each caught up, then taken live. */
  private streams: SocketStreams | undefined;
  private hiddenSenders: ReadonlySet<string> = new Set();
  /** Catch-ups waiting for the socket to drain (made by the first that waits). */
  private drainWaiters: (() => void)[] | undefined;
  /** What `typing` answers, made on first use. */
  private typingMap: Map<string, Typist> | undefined;
  /** This session's logger (naming the connection, and its principal once it has one), made on first use. */
  private ownLog: Logger | undefined;

  constructor(
    readonly id: string,
    private readonly ws: Socket,
    readonly codec: Codec,
    private readonly deps: SessionDeps,
    /** The node's logger: the session's own child of it is made when something is first logged. */
    private readonly nodeLog: Logger,
  ) {}

  /** The session's logger: its lines carry `conn`, and `principal` once authenticated. */
  get log(): Logger {
    if (this.ownLog === undefined) {
      this.ownLog = this.nodeLog.child(
        this.principal ? { conn: this.id, principal: this.principal.id } : { conn: this.id },
      );
    }
    return this.ownLog;
  }

  /**
   * Threads this session is typing in (a start of its went out and no stop yet): the lapse timer, the members
   * (runtime/ws/typing.ts). Made when first asked for: most sockets never type.
   */
  get typing(): Map<string, Typist> {
    this.typingMap ??= new Map();
    return this.typingMap;
  }

  /** Acks refused during an outage, retried by the node until they take (runtime/ws/ack-retries.ts). */
  get refusedAcks(): AckRetries {
    this.acks ??= new AckRetries(
      (raw, through) => this.deps.hub.ack(this.principal!.id, raw, through, "socket"),
      (a) => {
        if (a.ref !== undefined) this.send({ type: "ack", id: a.id, ref: a.ref });
      },
      // counted on the node's gauge (touched only when an ack is held or let go: during outages)
      { inc: (n) => this.deps.svc.metrics.ackRetries.inc(n), dec: (n) => this.deps.svc.metrics.ackRetries.dec(n) },
    );
    return this.acks;
  }

  /**
   * Start at once when the upgrade carried credentials, else wait for an auth frame. Called right after
   * the open event, not inside it: a send from inside the open handler of a socket upgraded in a cork
   * (the asynchronous upgrade) can get the fresh socket closed by uWS (uNetworking/uWebSockets#1928).
   */
  open(principal: Principal | null): void {
    if (this.life !== "upgraded") return;
    this.life = "awaitingAuth";
    if (principal) {
      void this.start(principal);
      return;
    }
    this.authTimer = setTimeout(() => this.end(WS_CLOSE.authTimeout, "authentication timeout"), AUTH_TIMEOUT_MS);
  }

  get closed(): boolean {
    return this.life === "closed";
  }

  /** Bytes waiting in the socket's send buffer (0 once closed). */
  get buffered(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  send(frame: ServerFrame): boolean {
    return this.write(this.codec.encode(frame));
  }

  sendError(error: string, message: string, ref?: Ref): void {
    this.send({ type: "error", error, message, ref });
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
    this.life = "closed";
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
        isOutage(err)
          ? this.end(WS_CLOSE.unavailable, "cannot check the token now")
          : isSuspension(err)
            ? this.end(WS_CLOSE.suspended, "account suspended")
            : this.end(WS_CLOSE.unauthorized, "token no longer valid"),
    );
  }

  private async start(principal: Principal): Promise<void> {
    clearTimeout(this.authTimer);
    if (this.closed) return;
    this.life = "started";
    this.principal = principal;
    this.watchExpiry();
    // a logger made before (while authenticating) gains the principal; one made later has it from the start
    if (this.ownLog !== undefined) this.ownLog = this.ownLog.child({ principal: principal.id });
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
          principal: authorOf(principal),
          protocol: this.codec.encoding,
          heartbeat_seconds: this.deps.heartbeatSeconds ?? HEARTBEAT_SECONDS,
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
    const hub = this.deps.hub;
    // whose group messages it hides, known before its groups are taken (a failed read hides none until a change)
    await this.reloadHidden().catch((err: unknown) => this.log.warn({ err }, "blocks not read"));
    if (this.closed) return;
    this.streams = new SocketStreams(this, hub.streams, hub.frames, this.deps.svc.metrics);
    this.streams.start(principal.id);
  }

  /** Whose group messages its principal does not take: those it blocked (runtime/messaging/hidden.ts). */
  hidden(): ReadonlySet<string> {
    return this.hiddenSenders;
  }

  async reloadHidden(): Promise<void> {
    const read = this.deps.hub.hiddenSenders;
    const me = this.principal?.id;
    if (read !== undefined && me !== undefined) this.hiddenSenders = await read(me);
  }

  /** A message it hides, passed over: acknowledged for its principal, so it never comes back. */
  passOver(id: string): void {
    const me = this.principal?.id;
    if (me === undefined) return;
    this.deps.hub
      .ack(me, BigInt(id), false, "socket")
      .catch((err: unknown) => this.log.warn({ err }, "a hidden message not acknowledged; it is passed over again"));
  }

  subscribe(topic: string): void {
    if (!this.closed) this.ws.subscribe(topic);
  }

  unsubscribe(topic: string): void {
    if (!this.closed) this.ws.unsubscribe(topic);
  }

  /** Runs `cb`'s writes as one. */
  cork(cb: () => void): void {
    this.ws.cork(cb);
  }

  /** Resolves once the socket's buffer is below HIGH_WATER (at once when it is, or when the socket closes). */
  drained(): Promise<void> {
    if (this.closed || this.ws.getBufferedAmount() < HIGH_WATER) return Promise.resolve();
    return new Promise((resolve) => (this.drainWaiters ??= []).push(resolve));
  }

  /** The socket drained: resume the catch-ups that wait for it. */
  onDrain(): void {
    const waiting = this.drainWaiters;
    if (waiting !== undefined && waiting.length > 0 && this.ws.getBufferedAmount() < HIGH_WATER) {
      this.drainWaiters = undefined;
      for (const w of waiting) w();
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
    const since = performance.now();
    try {
      raw = this.codec.decode(data);
    } catch {
      this.sendError(
        "invalid_request",
        `frame is not valid ${this.codec.encoding === "json" ? "JSON" : "MessagePack"}`,
      );
      return;
    }
    const ref = refOf(raw);
    const parsed = ClientFrame.safeParse(raw);
    this.deps.svc.slow.held(
      null,
      `WS ${parsed.success ? parsed.data.type : "invalid frame"}`,
      this.principal?.id,
      "input",
      since,
    );
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      this.sendError("invalid_request", `invalid frame: ${where}${issue?.message ?? "unknown shape"}`, ref);
      return;
    }
    const frame = parsed.data;
    if (frame.type === "auth") {
      if (this.life === "started" || this.life === "authenticating") {
        this.sendError("invalid_request", "already authenticated");
        return;
      }
      this.life = "authenticating";
      this.token = frame.token;
      this.deps.svc.auth.resolve(frame.token).then(
        (p) => this.start(p),
        (err: unknown) => {
          if (isOutage(err)) {
            this.sendError("unavailable", "cannot check the token now: a backend is unavailable; reconnect shortly");
            this.end(WS_CLOSE.unavailable, "unavailable");
            return;
          }
          if (isSuspension(err)) {
            this.sendError("suspended", err.message);
            this.end(WS_CLOSE.suspended, "account suspended");
            return;
          }
          this.sendError("unauthorized", "invalid or expired token");
          this.end(WS_CLOSE.unauthorized, "unauthorized");
        },
      );
      return;
    }
    if (!this.principal) {
      this.sendError("unauthorized", 'authenticate first: send {"type":"auth","token":...}', ref);
      if (this.life !== "authenticating") this.end(WS_CLOSE.unauthorized, "unauthorized");
      return;
    }
    const scope = FRAME_SCOPES[frame.type];
    if (!grants(this.principal, scope)) {
      this.send({
        type: "error",
        error: "insufficient_scope",
        message: `this token lacks the scope ${scope}`,
        scope,
        ref,
      });
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
    this.life = "closed";
    clearTimeout(this.authTimer);
    this.acks?.stop();
    const waiting = this.drainWaiters;
    this.drainWaiters = undefined;
    if (waiting !== undefined) for (const w of waiting) w();
    this.streams?.stop();
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
