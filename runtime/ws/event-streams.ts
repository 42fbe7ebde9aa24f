// This node's Server-Sent Events streams (GET /v1/events, handlers/events.ts): each is a WebSocket session
// (runtime/ws/session.ts) writing to an SseSocket, so it is caught up, taken live, relayed presence, typing and the
// other events, and bounded exactly as a WebSocket is; only the client's frames differ (an event stream has none: acks
// go over HTTP). At most `perPrincipal` streams per principal on a node; a comment every `heartbeatMs`; a draining
// node ends every stream with a `close` event (1001) as it closes its WebSockets, and opens no new one.
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import { WS_CLOSE } from "../../schema/ws.ts";
import type { Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { jsonCodec } from "./codec.ts";
import { LocalTopics } from "./local-topics.ts";
import { type SessionDeps, WsSession } from "./session.ts";
import { SseSocket } from "./sse-socket.ts";
import { guardTokens } from "./token-guard.ts";

export interface EventStreamSettings {
  /** Streams one principal may hold open on a node at once (FLOCK_SSE_STREAMS). */
  perPrincipal: number;
  /** How often an idle stream gets a `: ping` comment (ms). */
  heartbeatMs: number;
  /** The reconnection delay an EventSource is told (`retry:`, ms). */
  retryMs: number;
}

/** A comment every 20 s: under the 30-60 s idle time-outs proxies and load balancers commonly use. */
export const SSE_HEARTBEAT_MS = 20_000;
export const SSE_RETRY_MS = 1000;

const base = randomBytes(4).toString("hex");
let seq = 0;

/** An event stream sends no frames to the server: its session's frame handler is never called. */
const noFrames = () => Promise.reject(new Error("an event stream takes no client frames"));

export class EventStreams {
  /** The topics the node's publisher hands frames to for these streams (runtime/ws/server.ts). */
  readonly topics = new LocalTopics();
  private readonly open = new Set<WsSession>();
  private readonly sockets = new Set<SseSocket>();
  private readonly perPrincipal = new Map<string, number>();
  private draining = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unguard: () => void;
  private readonly deps: SessionDeps;

  constructor(
    deps: Omit<SessionDeps, "onFrame">,
    private readonly log: Logger,
    private readonly settings: EventStreamSettings,
  ) {
    this.deps = { ...deps, onFrame: noFrames, heartbeatSeconds: Math.round(settings.heartbeatMs / 1000) };
    this.unguard = guardTokens(deps.svc, this.open);
    this.heartbeat = setInterval(() => this.ping(), settings.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Streams open on this node. */
  get size(): number {
    return this.open.size;
  }

  /** Streams `principal` holds open on this node. */
  heldBy(principal: string): number {
    return this.perPrincipal.get(principal) ?? 0;
  }

  /**
   * Open a stream for `principal` (authenticated with `token`): the response body to answer with. 503 while the node
   * drains; 429 past the principal's streams.
   */
  start(principal: Principal, token: string, resumeAfter?: string): Readable {
    if (this.draining) throw new ApiError("unavailable", "shutting down", {}, { "Retry-After": "1" });
    const held = this.heldBy(principal.id);
    const limit = this.settings.perPrincipal;
    if (held >= limit) {
      throw new ApiError("rate_limited", `at most ${limit} event streams open at once (FLOCK_SSE_STREAMS)`, {
        limit,
      });
    }
    const socket = new SseSocket(this.topics, this.settings.retryMs);
    // the resume point is each stream's cursor, not the id: what was handed out and not acknowledged comes again
    if (resumeAfter !== undefined) socket.comment(`resuming after ${resumeAfter}: every unacknowledged message again`);
    const session = new WsSession(`sse-${base}-${(++seq).toString(36)}`, socket, jsonCodec, this.deps, this.log);
    session.token = token;
    this.open.add(session);
    this.sockets.add(socket);
    this.perPrincipal.set(principal.id, held + 1);
    socket.hooks = { onDrain: () => session.onDrain(), onClose: () => this.closed(session, socket, principal.id) };
    session.open(principal);
    return socket.body;
  }

  /** Heartbeat every open stream now (the timer's work; tests call it by hand). */
  ping(): void {
    for (const s of this.sockets) s.ping();
  }

  /** Refuse new streams and end every open one (1001), as the WebSockets are closed. */
  shutdown(): void {
    this.draining = true;
    clearInterval(this.heartbeat);
    this.unguard();
    for (const s of [...this.open]) s.end(WS_CLOSE.goingAway, "server shutting down");
  }

  private closed(session: WsSession, socket: SseSocket, principal: string): void {
    if (!this.open.delete(session)) return;
    this.sockets.delete(socket);
    const held = this.heldBy(principal) - 1;
    if (held > 0) this.perPrincipal.set(principal, held);
    else this.perPrincipal.delete(principal);
    void session.onClose();
  }
}
