// One message of a conversation: who and when (the name once per run of messages from the same sender), the
// message it answers, its body (or "Message deleted"), files, payment and reactions, "(edited)", and "Seen" (or, in a
// group, "Seen by …") under the newest of mine that was read; others' pictures open their runs. Its actions: Reply and React on any message; Edit (inline, within 48 hours)
// and Delete (after a confirm) on my own; Report on another's. Each change answers the message as it is now, shown at once (applyUpdate).
import type { Message } from "@flock/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { AttachmentView } from "./attachment.tsx";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { ReportButton } from "./safety.tsx";
import { dollars, When } from "./ui.tsx";

export const EMOJI = ["👍", "❤️", "😂", "🎉"] as const;
/** A message body's limit, in characters (Unicode code points), as the server counts it. */
export const MAX_BODY = 8000;
const EDIT_WINDOW_MS = 48 * 3600 * 1000;

/** The first line or so of a message, for a quote. */
export const excerpt = (body: string, n = 120): string => {
  const chars = [...body];
  return chars.length > n ? `${chars.slice(0, n).join("")}…` : body;
};

function Quote({ q, me }: { q: NonNullable<Message["reply_to"]>; me: string }) {
  return (
    <blockquote class="quote" data-quote={q.id}>
      <span class="sr-only">In reply to </span>
      <span class="quote-from">{q.from.id === me ? "You" : q.from.display_name}</span>{" "}
      {q.deleted ? <em>Message deleted</em> : <span class="quote-body">{excerpt(q.body || "(attachment)")}</span>}
    </blockquote>
  );
}

export function MessageItem(props: {
  m: Message;
  first: boolean;
  seen: { text: string; title: string } | null;
  onReply(m: Message): void;
  onError(text: string): void;
}) {
  const { m, first, seen, onReply, onError } = props;
  const { client, session, applyUpdate, fail } = useApp();
  const me = session.me.id;
  const mine = m.from.id === me;
  const deleted = Boolean(m.deleted_at);
  const [editing, setEditing] = useState<string | null>(null);
  const [picking, setPicking] = useState(false);
  const [busy, setBusy] = useState(false);
  const editBox = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const reactButton = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  const editable = mine && !deleted && Date.now() - Date.parse(m.created_at) < EDIT_WINDOW_MS;
  const reacted = (emoji: string) => m.reactions?.some((r) => r.emoji === emoji && r.by.includes(me)) ?? false;

  // the edit box takes the focus when it opens; the Edit button gets it back when it closes
  useEffect(() => {
    if (editing !== null) {
      editBox.current?.focus();
    } else if (refocus.current) {
      refocus.current = false;
      editButton.current?.focus();
    }
  }, [editing !== null]);

  async function run(f: () => Promise<Message>): Promise<boolean> {
    setBusy(true);
    try {
      applyUpdate(await f());
      return true;
    } catch (err) {
      onError(fail(err));
      return false;
    } finally {
      setBusy(false);
    }
  }

  function close() {
    refocus.current = true;
    setEditing(null);
  }

  async function save(e: Event) {
    e.preventDefault();
    const body = editing ?? "";
    if (body === m.body) return close();
    if (await run(() => client.editMessage(m.id, body))) close();
  }

  async function remove() {
    if (!confirm("Delete this message? It is removed for everyone in the conversation.")) return;
    const done = await run(async () => {
      await client.deleteMessage(m.id);
      const { attachments: _files, reactions: _reactions, ...rest } = m;
      return { ...rest, body: "", deleted_at: new Date().toISOString() };
    });
    // its buttons are gone with it: the keyboard goes on from the composer
    if (done) document.getElementById("message")?.focus();
  }

  function toggle(emoji: string) {
    setPicking(false);
    void run(() => (reacted(emoji) ? client.unreact(m.id, emoji) : client.react(m.id, emoji)));
  }

  const editLength = [...(editing ?? "")].length;
  return (
    <li
      class={`msg${mine ? " mine" : ""}${first ? "" : " cont"}`}
      data-message={m.id}
      data-deleted={deleted ? "" : undefined}
    >
      <div class="meta">
        {first && !mine && <Avatar who={m.from} size={24} />}
        <span class={first ? "from" : "from sr-only"}>{mine ? "You" : m.from.display_name}</span>{" "}
        <When iso={m.created_at} />
        {m.edited_at && !deleted && (
          <span class="edited" title={`edited ${new Date(m.edited_at).toLocaleString()}`}>
            (edited)
          </span>
        )}
      </div>
      {m.reply_to && <Quote q={m.reply_to} me={me} />}
      {deleted ? (
        <em class="deleted">Message deleted</em>
      ) : editing !== null ? (
        <form class="edit" onSubmit={save}>
          <label for={`edit-${m.id}`} class="sr-only">
            Edit message
          </label>
          <textarea
            id={`edit-${m.id}`}
            ref={editBox}
            rows={2}
            value={editing}
            onInput={(e) => setEditing(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                close();
              } else if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
          <div class="row">
            <button type="submit" class="primary" disabled={busy || !editing.trim() || editLength > MAX_BODY}>
              Save
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
            {editLength > MAX_BODY && (
              <span class="counter over">
                {editLength} / {MAX_BODY}
              </span>
            )}
          </div>
        </form>
      ) : (
        m.body && <p>{m.body}</p>
      )}
      {!deleted && (m.attachments ?? []).map((a) => <AttachmentView key={a.id} a={a} />)}
      {m.payment && (
        <p class="settled">
          <span class="badge">Paid {dollars(Number(m.payment.amount) / 1e6)} · settled</span>{" "}
          {m.payment.explorer_url ? (
            <a href={m.payment.explorer_url} target="_blank" rel="noopener noreferrer">
              View transaction
            </a>
          ) : (
            <code title="transaction">{m.payment.transaction.slice(0, 12)}…</code>
          )}
        </p>
      )}
      {!deleted && m.reactions && m.reactions.length > 0 && (
        <div class="reactions" role="group" aria-label="Reactions">
          {m.reactions.map((r) => {
            const on = r.by.includes(me);
            return (
              <button
                key={r.emoji}
                type="button"
                data-reaction={r.emoji}
                aria-pressed={on}
                disabled={busy}
                aria-label={`${r.emoji} ${r.count}: ${on ? "take yours back" : "react too"}`}
                onClick={() => toggle(r.emoji)}
              >
                {r.emoji} {r.count}
              </button>
            );
          })}
        </div>
      )}
      {!deleted && editing === null && (
        <div class="msg-actions">
          <button type="button" class="link" onClick={() => onReply(m)}>
            Reply
          </button>
          <button
            type="button"
            class="link"
            ref={reactButton}
            aria-expanded={picking}
            onClick={() => setPicking((p) => !p)}
          >
            React
          </button>
          {editable && (
            <button type="button" class="link" ref={editButton} onClick={() => setEditing(m.body)}>
              Edit
            </button>
          )}
          {mine && (
            <button type="button" class="link danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
          )}
          {!mine && <ReportButton target="message" id={m.id} />}
        </div>
      )}
      {picking && !deleted && (
        <div
          class="picker"
          role="group"
          aria-label="Choose a reaction"
          onKeyDown={(e) => {
            if (e.key !== "Escape") return;
            setPicking(false);
            reactButton.current?.focus();
          }}
        >
          {EMOJI.map((emoji) => (
            <button
              key={emoji}
              type="button"
              aria-label={`React with ${emoji}`}
              aria-pressed={reacted(emoji)}
              disabled={busy}
              onClick={() => toggle(emoji)}
            >
              {emoji}
            </button>
          ))}
        </div>
      )}
      {seen && (
        <span class="seen" data-seen={seen.text} title={seen.title}>
          {seen.text}
        </span>
      )}
    </li>
  );
}
