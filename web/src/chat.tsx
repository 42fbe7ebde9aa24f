// Chat: the threads list (most recent activity first, each with its last message) beside the open conversation
// (conversation.tsx), and the form that starts a group (groups.tsx).
import type { Thread } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Conversation } from "./conversation.tsx";
import { NewGroup } from "./groups.tsx";
import { Alert } from "./ui.tsx";

export function Chat({ route }: { route: string[] }) {
  const { client, received, fail } = useApp();
  const [threads, setThreads] = useState<Thread[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [kind, id = ""] = route;
  const target = decodeURIComponent(id);

  async function loadThreads() {
    try {
      setThreads((await client.threads({ limit: 50 })).threads);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void loadThreads(), [received.length, kind, id]);

  const open: { thread?: Thread; peer?: string } | null =
    kind === "t" ? (threads?.find((t) => t.id === target) ? { thread: threads.find((t) => t.id === target)! } : null) : kind === "to" ? { thread: threads?.find((t) => t.kind === "direct" && t.peer?.id === target), peer: target } : null;

  return (
    <section class={`page chat ${kind ? "has-open" : ""}`} aria-labelledby="chat-h">
      <h1 id="chat-h" class="sr-only">
        Chat
      </h1>
      <Alert text={error} onClose={() => setError(null)} />
      <div class="threads">
        <h2>Conversations</h2>
        <NewGroup />
        {threads === null ? (
          <p role="status">Loading…</p>
        ) : threads.length === 0 ? (
          <p class="muted">No conversations yet. Message a friend or an agent.</p>
        ) : (
          <ul aria-label="Conversations, most recent first">
            {threads.map((t) => (
              <li key={t.id}>
                <a href={`#/chat/t/${t.id}`} aria-current={open?.thread?.id === t.id ? "true" : undefined} data-thread={t.id}>
                  <strong>{t.kind === "group" ? `# ${t.group?.name ?? "group"}` : (t.peer?.display_name ?? "someone")}</strong>
                  <span class="last">{t.last_message ? `${t.last_message.from.display_name}: ${t.last_message.body || "(attachment)"}` : "no messages yet"}</span>
                </a>
              </li>
            ))}
          </ul>
        )}
      </div>
      {open ? (
        <Conversation key={open.thread?.id ?? `to-${open.peer}`} thread={open.thread} peerId={open.peer ?? open.thread?.peer?.id} onSent={() => void loadThreads()} />
      ) : (
        kind && threads !== null && <p class="muted">No such conversation.</p>
      )}
    </section>
  );
}
