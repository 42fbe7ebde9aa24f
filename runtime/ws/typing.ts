// What a connection's typing frames do. Each frame is taken from the connection's budget (runtime/ws/typing-limits.ts);
// a start or stop in a thread the principal belongs to is announced to the thread's other members
// (runtime/events/announcer.ts), whose nodes hand it to their sessions (runtime/ws/addressed-relay.ts). A start lapses
// after TYPING_TTL_SECONDS unless repeated; a connection that closes stops what it started.
import { PREFIX } from "../ids.ts";
import { authorOf } from "../auth.ts";
import { notFound } from "../errors.ts";
import { WS_CLOSE } from "../../schema/ws.ts";
import type { LiveSession } from "./local-sessions.ts";
import type { RealtimeCore } from "./realtime.ts";
import type { RealtimeStore } from "./realtime-store.ts";
import { StartGate, TYPING_BURST, TYPING_PER_SECOND, TypingBudget } from "./typing-limits.ts";

/** A typing start lapses after this many seconds unless repeated. */
export const TYPING_TTL_SECONDS = 10;
const MEMBERS_CACHE_MS = 5_000;

export class Typing {
  private readonly members = new Map<bigint, { ids: string[]; at: number }>();
  /** Typing starts gone out, per principal and thread; each connection's budget of typing frames. */
  private readonly starts = new StartGate();
  private readonly budgets = new WeakMap<LiveSession, TypingBudget>();

  constructor(
    private readonly svc: Pick<RealtimeCore, "announce" | "now">,
    private readonly store: RealtimeStore,
  ) {}

  /**
   * Take one typing frame from the connection's budget. A flood gets an error frame, then the socket is closed with
   * WS_CLOSE.typingFlood, and false.
   */
  admit(s: LiveSession): boolean {
    const now = this.svc.now();
    let budget = this.budgets.get(s);
    if (!budget) {
      budget = new TypingBudget(now);
      this.budgets.set(s, budget);
    }
    if (budget.take(now)) return true;
    s.sendError(
      "rate_limited",
      `typing frames faster than ${TYPING_BURST} at once and ${TYPING_PER_SECOND} a second: closing the connection`,
    );
    s.end(WS_CLOSE.typingFlood, "typing flood");
    return false;
  }

  /**
   * Typing start/stop in a thread the session's principal belongs to (404 otherwise). A start goes out at most
   * every TYPING_REPEAT_MS per principal and thread (a repeat meanwhile only keeps this connection's start from
   * lapsing); a stop goes out only after a start of this connection did, once.
   */
  async frame(s: LiveSession, thread: bigint, state: "start" | "stop"): Promise<void> {
    const now = this.svc.now();
    const me = s.principal!;
    const members = await this.membersOf(thread, now);
    if (!members.includes(me.id)) throw notFound("thread");
    if (s.closed) return;
    const key = PREFIX.thread + thread.toString();
    const cur = s.typing.get(key);
    if (state === "stop") {
      if (!cur) return;
      clearTimeout(cur.timer);
      s.typing.delete(key);
      await this.announce(s, key, "stop", members);
      return;
    }
    const goesOut = this.starts.pass(me.id, key, now);
    if (!goesOut && !cur) return;
    if (cur) clearTimeout(cur.timer);
    const timer = setTimeout(() => {
      s.typing.delete(key);
      void this.announce(s, key, "stop", members).catch(() => {});
    }, TYPING_TTL_SECONDS * 1000);
    timer.unref();
    s.typing.set(key, { timer, members });
    if (goesOut) await this.announce(s, key, "start", members);
  }

  /** A session closing: every typing of its that went out is stopped. */
  async leave(s: LiveSession): Promise<void> {
    for (const [thread, t] of s.typing) {
      clearTimeout(t.timer);
      await this.announce(s, thread, "stop", t.members).catch(() => {});
    }
    s.typing.clear();
  }

  private async membersOf(thread: bigint, now: number): Promise<string[]> {
    const hit = this.members.get(thread);
    if (hit && now - hit.at < MEMBERS_CACHE_MS) return hit.ids;
    const ids = await this.store.membersOf(thread);
    if (this.members.size > 10_000) this.members.clear();
    this.members.set(thread, { ids, at: now });
    return ids;
  }

  private announce(s: LiveSession, thread: string, state: "start" | "stop", members: string[]): Promise<void> {
    const me = s.principal!;
    return this.svc.announce.typing({ thread, from: authorOf(me), state, to: members.filter((m) => m !== me.id) });
  }
}
