// Chat: the threads list (most recent activity first, each with its picture, last message, time and unread count)
// beside the open conversation (conversation.tsx), message search over every conversation (search.tsx), the forms
// that start a conversation (a person found by name) or a group (groups.tsx), and the switch for notifications
// (notify.tsx). The list itself is the app's (threads.ts), kept up to date live.
import type { Thread } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { Conversation } from "./conversation.tsx";
import { NewGroup } from "./groups.tsx";
import { NotifyToggle } from "./notify.tsx";
import { MessageSearch, PeopleSearch } from "./search.tsx";
import { Alert, ShortWhen, Unread } from "./ui.tsx";

/** The last message as the list shows it: "You: …" for one's own, a tombstone or a file named so. */
function lastLine(t: Thread, me: string): string {
  const m = t.last_message;
  if (!m) return "no messages yet";
  const text = m.deleted_at ? "Message deleted" : m.body || "(attachment)";
  return `${m.from.id === me ? "You" : m.from.display_name}: ${text}`;
}

export function Chat({ route }: { route: string[] }) {
  const { session, threads, threadsError, clearThreadsError, reloadThreads } = useApp();
  const [kind, id = ""] = route;
  const target = decodeURIComponent(id);

  useEffect(() => reloadThreads(0), [kind, id]);

  const open: { thread?: Thread; peer?: string } | null =
    kind === "t"
      ? threads?.find((t) => t.id === target)
        ? { thread: threads.find((t) => t.id === target)! }
        : null
      : kind === "to"
        ? { thread: threads?.find((t) => t.kind === "direct" && t.peer?.id === target), peer: target }
        : null;

  return (
    <section class={`page chat ${kind ? "has-open" : ""}`} aria-labelledby="chat-h">
      <h1 id="chat-h" class="sr-only">
        Chat
      </h1>
      <Alert text={threadsError} onClose={clearThreadsError} />
      <div class="threads">
        <h2>Conversations</h2>
        <MessageSearch />
        <div class="thread-tools">
          <NewChat />
          <NewGroup />
          <NotifyToggle />
        </div>
        {threads === null ? (
          <p role="status">Loading…</p>
        ) : threads.length === 0 ? (
          <p class="muted">No conversations yet. Message a friend or an agent.</p>
        ) : (
          <ul aria-label="Conversations, most recent first">
            {threads.map((t) => (
              <li key={t.id}>
                <a
                  href={`#/chat/t/${t.id}`}
                  aria-current={open?.thread?.id === t.id ? "true" : undefined}
                  data-thread={t.id}
                  class={t.unread_count > 0 ? "has-unread" : undefined}
                >
                  <Avatar
                    who={
                      t.kind === "group"
                        ? { id: t.id, display_name: t.group?.name ?? "group" }
                        : (t.peer ?? { id: t.id, display_name: "?" })
                    }
                    size={36}
                  />
                  <span class="thread-top">
                    <strong>
                      {t.kind === "group" ? `# ${t.group?.name ?? "group"}` : (t.peer?.display_name ?? "someone")}
                    </strong>{" "}
                    {t.last_message && <ShortWhen iso={t.last_message.created_at} />} <Unread n={t.unread_count} />
                    {t.muted && (
                      <span class="muted" data-muted-thread>
                        {" "}
                        muted
                      </span>
                    )}
                  </span>
                  <span class="last">{lastLine(t, session.me.id)}</span>
                </a>
              </li>
            ))}
          </ul>
        )}
      </div>
      {open ? (
        <Conversation
          // one conversation per route: /chat/to/<peer> keeps its draft and picked files when the thread list
          // arrives (or the first send makes the thread) and finds its thread
          key={open.peer !== undefined ? `to-${open.peer}` : open.thread?.id}
          thread={open.thread}
          peerId={open.peer ?? open.thread?.peer?.id}
          onSent={() => reloadThreads(0)}
        />
      ) : (
        kind && threads !== null && <p class="muted">No such conversation.</p>
      )}
    </section>
  );
}

/** Starts a direct conversation: find the person or agent by name (or paste an id) and open it. */
function NewChat() {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New message
      </button>
    );
  return (
    <div class="card new-chat" role="group" aria-label="New message">
      <PeopleSearch
        id="chat-q"
        label="Message someone"
        action={(p) => (
          <a
            class="button primary"
            href={`#/chat/to/${encodeURIComponent(p.id)}`}
            onClick={() => setOpen(false)}
            aria-label={`Message ${p.display_name}`}
          >
            Message
          </a>
        )}
      />
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </div>
  );
}
