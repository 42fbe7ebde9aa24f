// The conversations list, shared by the whole app: each thread's unread count and read markers, and the total for the
// navigation badge and the tab title. The server is the truth (GET /v1/threads, reloaded shortly after anything
// changes); live frames move the counts at once meanwhile: a message from someone else raises its thread's count, a
// `read` frame of mine (this tab or another) clears it, a peer's `read` frame moves the direct thread's receipt.
import type { Author, Flock, Message, Thread } from "@flock/client";
import { useCallback, useMemo, useRef, useState } from "preact/hooks";

/** The number inside an id (`msg_123` → 123n): ids are time-ordered, so a larger one is newer. */
export const idNum = (id: string): bigint => {
  const digits = id.slice(id.indexOf("_") + 1);
  return /^\d+$/.test(digits) ? BigInt(digits) : 0n;
};

/** True when message id `a` is newer than `b` (any id is newer than none). */
export const newer = (a: string, b: string | null | undefined): boolean => !b || idNum(a) > idNum(b);

/** A count for a badge: the server counts up to 1000 per thread, so "999+" beyond. */
export const unreadText = (n: number): string => (n > 999 ? "999+" : String(n));

export interface ThreadsState {
  /** The newest 50 conversations, newest activity first; null until loaded. */
  threads: Thread[] | null;
  /** Unread messages in every conversation (not only the listed ones). */
  unreadTotal: number;
  threadsError: string | null;
  clearThreadsError(): void;
  /** Reloads the list after `delay` ms (calls close together make one request). */
  reloadThreads(delay?: number): void;
  /** Marks a thread read through a message (and everything before it). */
  markRead(threadId: string, through: string): Promise<void>;
}

export interface ThreadsEvents {
  /** A message arrived live; `open` is the thread the person is looking at now (its count does not rise). */
  message(m: Message, open: string | null): void;
  update(m: Message): void;
  read(e: { thread_id: string; from: Author; through: string }): void;
  /** The thread's title for a notification ("# name" for a group). */
  title(threadId: string): string | undefined;
}

interface Snapshot {
  threads: Thread[] | null;
  total: number;
}

export function useThreads(
  client: Flock,
  me: string,
  fail: (err: unknown) => string,
): ThreadsState & { on: ThreadsEvents } {
  const [snap, setSnap] = useState<Snapshot>({ threads: null, total: 0 });
  const [threadsError, setError] = useState<string | null>(null);
  // loads are numbered; one that started before the last local change (or before a later load answered) is dropped
  const started = useRef(0);
  const applied = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(snap);
  latest.current = snap;

  const load = useCallback(async () => {
    const seq = ++started.current;
    try {
      const r = await client.threads({ limit: 50 });
      if (seq <= applied.current) return;
      applied.current = seq;
      setSnap({ threads: r.threads, total: r.unread_total });
      setError(null);
    } catch (err) {
      setError(fail(err));
    }
  }, [client, fail]);

  const reloadThreads = useCallback(
    (delay = 150) => {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => void load(), delay);
    },
    [load],
  );

  /** A local change: loads already under way answer from before it, so they are dropped; a new one follows. */
  const changed = useCallback(() => {
    applied.current = started.current;
    reloadThreads();
  }, [reloadThreads]);

  const patch = useCallback((threadId: string, f: (t: Thread) => Thread) => {
    setSnap((s) => {
      if (!s.threads) return s;
      let total = s.total;
      const threads = s.threads.map((t) => {
        if (t.id !== threadId) return t;
        const n = f(t);
        total += n.unread_count - t.unread_count;
        return n;
      });
      return { threads, total: Math.max(0, total) };
    });
  }, []);

  const markRead = useCallback(
    async (threadId: string, through: string) => {
      const r = await client.markRead(threadId, through);
      patch(threadId, (t) =>
        newer(r.read_through, t.read_through) || r.unread_count !== t.unread_count
          ? { ...t, read_through: r.read_through, unread_count: r.unread_count }
          : t,
      );
      changed();
    },
    [client, patch, changed],
  );

  const on = useMemo<ThreadsEvents>(
    () => ({
      message(m, open) {
        setSnap((s) => {
          const i = s.threads?.findIndex((t) => t.id === m.thread_id) ?? -1;
          const t = s.threads?.[i];
          if (!s.threads || !t || (t.last_message && !newer(m.id, t.last_message.id))) return s; // new thread, or known
          const counts = m.from.id !== me && m.thread_id !== open && newer(m.id, t.read_through) ? 1 : 0;
          const moved: Thread = {
            ...t,
            last_message: m,
            updated_at: m.created_at,
            unread_count: t.unread_count + counts,
          };
          return { threads: [moved, ...s.threads.filter((_, j) => j !== i)], total: s.total + counts };
        });
        changed();
      },
      update(m) {
        setSnap((s) =>
          s.threads?.some((t) => t.last_message?.id === m.id)
            ? { ...s, threads: s.threads.map((t) => (t.last_message?.id === m.id ? { ...t, last_message: m } : t)) }
            : s,
        );
      },
      read(e) {
        if (e.from.id === me) {
          patch(e.thread_id, (t) => {
            if (!newer(e.through, t.read_through)) return t;
            const all = !t.last_message || !newer(t.last_message.id, e.through);
            return { ...t, read_through: e.through, unread_count: all ? 0 : t.unread_count };
          });
          changed();
        } else {
          patch(e.thread_id, (t) =>
            t.kind === "direct" && newer(e.through, t.peer_read_through) ? { ...t, peer_read_through: e.through } : t,
          );
        }
      },
      title(threadId) {
        const t = latest.current.threads?.find((x) => x.id === threadId);
        return t?.kind === "group" ? `# ${t.group?.name ?? "group"}` : undefined;
      },
    }),
    [me, patch, changed],
  );

  const clearThreadsError = useCallback(() => setError(null), []);
  return {
    threads: snap.threads,
    unreadTotal: snap.total,
    threadsError,
    clearThreadsError,
    reloadThreads,
    markRead,
    on,
  };
}
