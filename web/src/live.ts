// The live connection: one WebSocket to /v1/ws (token as the bearer.<token> subprotocol; lean message frames, filled
// in as the SDK does: client/ws.ts, fullMessage), reconnecting with
// exponential backoff (0.5 s doubling to 15 s, with jitter). On every connect the server hands out again every
// message not yet acknowledged, so nothing is lost across a restart; the page acks a message only after showing it.
// Besides messages: presence, typing, `message_update` (an edit, deletion or reaction), `read` (a read marker moved),
// `friend_request` (someone asked to be friends), `friendship` (one made or ended), `moment` (a friend's new moment)
// and `moment_counts` (the new like and comment counts of a moment one may see).
import type { Author, FriendRequest, Message, Moment, PendingMessage } from "@flock/client";
import { fullMessage } from "../../client/ws.ts";

export type LiveEvent =
  | { type: "status"; status: "connecting" | "online" | "offline" | "unauthorized" }
  | { type: "message"; message: PendingMessage }
  | { type: "presence"; principal: Author; status: "online" | "offline" }
  | { type: "typing"; thread_id: string; from: Author; state: "start" | "stop"; expires_in?: number }
  | { type: "message_update"; message: Message }
  | { type: "read"; thread_id: string; from: Author; through: string }
  | { type: "friend_request"; request: FriendRequest; from: Author }
  | { type: "friendship"; friend: Author; status: "made" | "ended" }
  | { type: "moment"; moment: Moment }
  | { type: "moment_counts"; id: string; like_count: number; comment_count: number; rev: number };

/** The server's frames handed on as they come. */
const EVENTS = new Set([
  "presence",
  "typing",
  "message_update",
  "read",
  "friend_request",
  "friendship",
  "moment",
  "moment_counts",
]);

export class Live {
  private ws: WebSocket | null = null;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly listeners = new Set<(e: LiveEvent) => void>();

  constructor(
    private readonly api: string,
    private readonly token: string,
  ) {}

  on(cb: (e: LiveEvent) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private emit(e: LiveEvent) {
    for (const cb of this.listeners) cb(e);
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = null;
  }

  private connect() {
    if (this.stopped) return;
    this.emit({ type: "status", status: "connecting" });
    const url = `${this.api.replace(/^http/, "ws").replace(/\/+$/, "")}/v1/ws`;
    // lean message frames first, full ones from a server without them
    const ws = new WebSocket(url, ["flock.json.lean", "flock.json", `bearer.${this.token}`]);
    this.ws = ws;
    /** This connection's principal (its ready frame's): the receiver a lean direct message leaves out. */
    let me: string | undefined;
    ws.addEventListener("message", (ev) => {
      let frame: { type?: string } & Record<string, unknown>;
      try {
        frame = JSON.parse(String(ev.data)) as typeof frame;
      } catch {
        return;
      }
      if (frame.type === "ready") {
        me = (frame["principal"] as { id?: string } | undefined)?.id;
        this.failures = 0;
        this.emit({ type: "status", status: "online" });
      } else if (frame.type === "message" && typeof frame["message"] === "object" && frame["message"] !== null) {
        this.emit({
          type: "message",
          message: fullMessage(frame["message"] as Record<string, unknown>, me) as PendingMessage,
        });
      } else if (frame.type !== undefined && EVENTS.has(frame.type)) {
        this.emit(frame as LiveEvent);
      }
    });
    ws.addEventListener("close", (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (ev.code === 4401) {
        this.emit({ type: "status", status: "unauthorized" });
        return;
      }
      this.emit({ type: "status", status: "offline" });
      if (this.stopped) return;
      const delay = Math.min(15_000, 500 * 2 ** this.failures++) * (0.75 + Math.random() * 0.5);
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }

  private send(frame: object): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  /** Acknowledges a message the page has shown; false when offline (it comes again on reconnect). */
  ack(id: string): boolean {
    return this.send({ type: "ack", id });
  }

  typing(threadId: string, state: "start" | "stop"): void {
    this.send({ type: "typing", thread_id: threadId, state });
  }
}
