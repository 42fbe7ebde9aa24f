// This node's authenticated WebSocket sessions by principal: where every relay finds the local connections an event
// concerns. A session is here from the start of its presence join to its leave.
import { addTo, removeFrom } from "../set-map.ts";
import type { WsSession } from "./session.ts";

/** The part of a session the realtime relays use (runtime/ws/session.ts; a recording one in unit tests). */
export type LiveSession = Pick<
  WsSession,
  "id" | "principal" | "closed" | "joined" | "typing" | "log" | "send" | "sendError" | "end"
>;

export class LocalSessions {
  private readonly byPrincipal = new Map<string, Set<LiveSession>>();

  add(s: LiveSession): void {
    addTo(this.byPrincipal, s.principal!.id, s);
  }

  remove(s: LiveSession): void {
    removeFrom(this.byPrincipal, s.principal!.id, s);
  }

  /** Whether any session of `principal` is here. */
  has(principal: string): boolean {
    return this.byPrincipal.has(principal);
  }

  /** The sessions of `principal` on this node (none: an empty set). */
  of(principal: string): ReadonlySet<LiveSession> {
    return this.byPrincipal.get(principal) ?? NONE;
  }

  /** Every session on this node. */
  all(): LiveSession[] {
    return [...this.byPrincipal.values()].flatMap((s) => [...s]);
  }
}

const NONE: ReadonlySet<never> = new Set();
