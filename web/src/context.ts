// What every page shares: the session's client, the live connection's state, and how to report a failure
// (a 401 signs out with "session expired"; anything else is shown in the page's alert), the conversations list with
// its unread counts (threads.ts), the messages changed since they were shown (edits, deletions, reactions), and the
// names known for ids (names.tsx), and whom I blocked or muted (safety.tsx).
import type { Flock, Message, PendingMessage } from "@flock/client";
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Live } from "./live.ts";
import type { PeopleCache } from "./names.tsx";
import type { Safety } from "./safety.tsx";
import type { Session, SessionChange } from "./session.ts";
import type { ThreadsState } from "./threads.ts";

export interface TypingState {
  name: string;
  until: number;
}

export interface AppState extends ThreadsState {
  session: Session;
  /** Changes the session here and in storage (a new name, a wallet linked); the client and connection stay. */
  updateSession(change: SessionChange): void;
  client: Flock;
  live: Live;
  /** Friends online now, by id. */
  online: ReadonlySet<string>;
  /** Who is typing in which thread. */
  typing: ReadonlyMap<string, TypingState>;
  /** Messages received live this session, oldest first. */
  received: readonly PendingMessage[];
  liveStatus: string;
  /** Messages as they are now, by id, for those changed since they were shown (`message_update` frames, own edits). */
  updates: ReadonlyMap<string, Message>;
  /** Replaces a message wherever it is shown. */
  applyUpdate(m: Message): void;
  /** Friend requests waiting for an answer (the Friends link's badge). */
  friendRequests: number;
  /** The Friends page tells the count it just loaded. */
  setFriendRequests(n: number): void;
  /** Names and pictures of the principals seen so far, by id (names.tsx). */
  people: PeopleCache;
  /** Whom I blocked and muted, whether I am a moderator, and how to change the first two (safety.tsx). */
  safety: Safety;
  /** Reports a failure: signs out on 401, else answers the sentence to show. */
  fail(err: unknown): string;
}

export const App = createContext<AppState | null>(null);

export function useApp(): AppState {
  const s = useContext(App);
  if (!s) throw new Error("useApp outside the app");
  return s;
}
