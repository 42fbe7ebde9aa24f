// What every page shares: the session's client, the live connection's state, and how to report a failure
// (a 401 signs out with "session expired"; anything else is shown in the page's alert).
import type { Flock, PendingMessage } from "@flock/client";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Live } from "./live.ts";
import type { Session } from "./session.ts";

export interface TypingState {
  name: string;
  until: number;
}

export interface AppState {
  session: Session;
  client: Flock;
  live: Live;
  /** Friends online now, by id. */
  online: ReadonlySet<string>;
  /** Who is typing in which thread. */
  typing: ReadonlyMap<string, TypingState>;
  /** Messages received live this session, oldest first. */
  received: readonly PendingMessage[];
  liveStatus: string;
  /** Reports a failure: signs out on 401, else answers the sentence to show. */
  fail(err: unknown): string;
}

export const App = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(App);
  if (!s) throw new Error("useApp outside the app");
  return s;
}
