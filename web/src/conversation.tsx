// One conversation, direct or group: history paged backwards (when the list is scrolled to the top, or with the
// button), live messages from the WebSocket, typing both ways, attachments (upload, inline images, downloads), the
// group's members, and paid agents paid through the wallet (the price is shown before sending; the message then
// carries a settled badge with its explorer link). Edits, deletions and reactions show live (message.tsx); a reply
// quotes its message above the composer and is sent with `reply_to`; the composer counts characters up to 8,000.
// Shown in a visible tab, the conversation is marked read through its newest message; in a direct conversation,
// "Seen" goes under the newest of my messages the peer has read; in a group, "Seen by …" under my newest message
// counts the members who have read it (reads.ts). The header has the peer's Mute / Block / Report menu (a direct
// conversation) and mutes or unmutes the conversation itself (no unread count, no notification).
import {
  Flock,
  FlockError,
  newIdempotencyKey,
  type AgentProfile,
  type Group,
  type Message,
  type Thread,
} from "@flock/client";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { Picked } from "./attachment.tsx";
import { useApp } from "./context.ts";
import { Members } from "./groups.tsx";
import { excerpt, MAX_BODY, MessageItem } from "./message.tsx";
import { Name } from "./names.tsx";
import { networkName } from "./networks.ts";
import { seenBy, useGroupReads } from "./reads.ts";
import { muteThread, PersonActions } from "./safety.tsx";
import { newer } from "./threads.ts";
import { Alert, Dot, dollars, useVisible } from "./ui.tsx";
import { WalletPayer } from "./wallet.ts";

const order = (a: Message, b: Message) =>
  a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1;

/**
 * A failed send that may be tried again with its Idempotency-Key: no answer (the connection failed), a 502/503/504
 * (a node shutting down, a backend outage: whether it was stored may be unknown), or a 409 with Retry-After (the
 * first attempt with this key is still running). The key makes the retry safe: the server answers a message it
 * already stored with its first answer instead of storing it again.
 */
function retryableSend(err: unknown): boolean {
  if (!(err instanceof FlockError)) return err instanceof TypeError; // fetch's network failure
  if (err.status === 502 || err.status === 503 || err.status === 504) return true;
  return err.status === 409 && err.code === "conflict" && err.retryAfter !== undefined;
}

function merge(into: readonly Message[], more: readonly Message[]): Message[] {
  const byId = new Map(into.map((m) => [m.id, m]));
  for (const m of more) byId.set(m.id, { ...byId.get(m.id), ...m });
  return [...byId.values()].sort(order);
}

export function Conversation({ thread, peerId, onSent }: { thread?: Thread; peerId?: string; onSent(): void }) {
  const { client, session, received, typing, online, live, fail, updates, markRead, people, reloadThreads } = useApp();
  const me = session.me.id;
  const [messages, setMessages] = useState<Message[]>([]);
  const [more, setMore] = useState(false);
  const [text, setText] = useState("");
  const [files, setFiles] = useState<File[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [paid, setPaid] = useState<AgentProfile | null>(null);
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [group, setGroup] = useState<Group | null>(null);
  const [threadMuted, setThreadMuted] = useState<boolean | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const typingSent = useRef(0);
  const idle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const list = useRef<HTMLOListElement>(null);
  const loadingOlder = useRef(false);
  // where the list stood before an older page was put above it, so the messages read stay in place
  const anchor = useRef<{ height: number; top: number } | null>(null);
  const newest = useRef<string | undefined>(undefined);
  const threadId = thread?.id;
  const groupId = thread?.kind === "group" ? thread.group?.id : undefined;
  const title =
    thread?.kind === "group"
      ? `# ${thread.group?.name ?? "group"}`
      : (thread?.peer?.display_name ?? (peerId && people.known.get(peerId)?.display_name) ?? peerId ?? "");

  async function page(before?: string) {
    if (!threadId) return;
    try {
      const h = await client.threadMessages(threadId, { limit: 30, ...(before ? { before } : {}) });
      people.learn(h.messages.map((m) => m.from)); // as they are now: names and pictures may have changed since
      setMessages((m) => merge(m, h.messages));
      setMore(h.has_more ?? false);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void page(), [threadId]);

  async function older() {
    const el = list.current;
    if (loadingOlder.current || !more) return;
    loadingOlder.current = true;
    if (el) anchor.current = { height: el.scrollHeight, top: el.scrollTop };
    try {
      await page(messages[0]?.id);
    } finally {
      loadingOlder.current = false;
    }
  }

  useEffect(() => {
    if (!peerId || peerId.startsWith("P")) return;
    client.agent(peerId).then(
      (a) => (people.learn([a]), setPaid(a.x402_enabled && a.price !== null ? a : null)),
      () => setPaid(null),
    );
  }, [peerId]);

  useEffect(() => {
    if (groupId) client.group(groupId).then(setGroup, (err: unknown) => setError(fail(err)));
  }, [groupId]);

  // live messages for this conversation
  const live_ = useMemo(
    () => received.filter((m) => (threadId ? m.thread_id === threadId : m.from.id === peerId)),
    [received, threadId, peerId],
  );
  // each as it is now: a message changed since (an edit, a deletion, a reaction) is replaced whole
  const shown = useMemo(() => merge(messages, live_).map((m) => updates.get(m.id) ?? m), [messages, live_, updates]);

  // read: through the newest message, once the tab is visible and something from others is past the marker
  const visible = useVisible();
  const asked = useRef<string | null>(null);
  const newestId = shown[shown.length - 1]?.id;
  const unseen = thread
    ? thread.unread_count > 0 || shown.some((m) => m.from.id !== me && newer(m.id, thread.read_through))
    : false;
  useEffect(() => {
    if (!threadId || !visible || !newestId || !unseen) return;
    if (asked.current && !newer(newestId, asked.current)) return;
    asked.current = newestId;
    markRead(threadId, newestId).catch((err: unknown) => {
      asked.current = null;
      setError(fail(err));
    });
  }, [threadId, visible, newestId, unseen]);

  // "Seen" under the newest of my messages the peer has read (direct conversations)
  const peerRead = thread?.kind === "direct" ? thread.peer_read_through : null;
  const seenId = peerRead
    ? [...shown].reverse().find((m) => m.from.id === me && !newer(m.id, peerRead))?.id
    : undefined;
  // in a group: under my newest message, who has read it
  const reads = useGroupReads(threadId, thread?.kind === "group");
  const myLast =
    thread?.kind === "group" ? [...shown].reverse().find((m) => m.from.id === me && !m.deleted_at) : undefined;
  const groupSeen = myLast
    ? seenBy([...reads.values()].filter((r) => !newer(myLast.id, r.through)).map((r) => r.member))
    : null;
  const seenFor = (id: string) =>
    id === seenId ? { text: "Seen", title: "Seen" } : myLast?.id === id ? groupSeen : null;

  // pinned to the newest while the reader is at the bottom: whatever grows the list afterwards (a picture loading,
  // reactions, "Seen") keeps the newest message and its actions in view; scrolling up unpins it. A scroll that comes
  // with a change of height is the browser's (its scroll anchoring, before the resize is observed), not the reader's.
  const pinned = useRef(true);
  const height = useRef(0);
  useEffect(() => {
    const el = list.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const sizes = new ResizeObserver(() => {
      if (pinned.current && !anchor.current) el.scrollTop = el.scrollHeight;
      height.current = el.scrollHeight;
    });
    const watch = () => {
      sizes.disconnect();
      sizes.observe(el);
      for (const child of el.children) sizes.observe(child);
    };
    watch();
    const added = new MutationObserver(watch);
    added.observe(el, { childList: true });
    return () => (sizes.disconnect(), added.disconnect());
  }, []);

  // a new message at the end scrolls to it; an older page above keeps what was on screen where it was
  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    const last = shown[shown.length - 1]?.id;
    if (anchor.current) {
      el.scrollTop = el.scrollHeight - anchor.current.height + anchor.current.top;
      anchor.current = null;
    } else if (last !== newest.current) {
      el.scrollTop = el.scrollHeight;
      pinned.current = true;
    }
    newest.current = last;
  }, [shown]);

  const payer = useMemo(() => {
    if (!paid || !session.address) return null;
    const price = paid.price ?? 0;
    return new Flock({
      baseUrl: session.api,
      token: session.token,
      retry: { maxAttempts: 1 },
      payments: new WalletPayer(session.address, async (d) => d <= price + 1e-9),
    });
  }, [paid, session]);

  function onType(value: string) {
    setText(value);
    if (!threadId) return;
    const now = Date.now();
    if (now - typingSent.current > 3000) {
      live.typing(threadId, "start");
      typingSent.current = now;
    }
    clearTimeout(idle.current);
    idle.current = setTimeout(() => {
      live.typing(threadId, "stop");
      typingSent.current = 0;
    }, 4000);
  }

  async function send(e: Event) {
    e.preventDefault();
    const body = text.trim();
    if (!body && files.length === 0) return;
    if (threadId && typingSent.current) {
      clearTimeout(idle.current);
      live.typing(threadId, "stop");
      typingSent.current = 0;
    }
    setSending(true);
    setError(null);
    try {
      const attachments: string[] = [];
      for (const f of files)
        attachments.push(
          (await client.upload(f, { name: f.name, contentType: f.type || "application/octet-stream" })).id,
        );
      const extra = { ...(attachments.length ? { attachments } : {}), ...(replyTo ? { reply_to: replyTo.id } : {}) };
      // one Idempotency-Key for this message, the same on every attempt (and on a paid send's 402 and paid retry)
      const key = { idempotencyKey: newIdempotencyKey() };
      const once = async (): Promise<Message | null> => {
        if (groupId) return client.sendGroup(groupId, body, extra, key);
        if (peerId) return (payer ?? client).send(peerId, body, extra, key);
        return null;
      };
      // a send whose outcome is unknown (503, no answer) or still running: try again with the same key, backing off
      let sent: Message | null = null;
      for (let attempt = 0; ; attempt++) {
        try {
          sent = await once();
          break;
        } catch (err) {
          if (!retryableSend(err) || attempt >= 4) throw err;
          const wait =
            err instanceof FlockError && err.retryAfter !== undefined ? err.retryAfter * 1000 : 500 * 2 ** attempt;
          await new Promise((r) => setTimeout(r, wait));
        }
      }
      if (!sent) return;
      setText("");
      setReplyTo(null);
      setFiles([]);
      if (fileInput.current) fileInput.current.value = "";
      setMessages((m) => merge(m, [sent]));
      if (!threadId) location.hash = `#/chat/t/${sent.thread_id}`;
      onSent();
    } catch (err) {
      setError(fail(err));
    } finally {
      setSending(false);
    }
  }

  function reply(m: Message) {
    setReplyTo(m);
    document.getElementById("message")?.focus();
  }

  const who = typing.get(threadId ?? "");
  const length = [...text].length;
  const over = length > MAX_BODY;
  const needsWallet = paid !== null && !payer;

  return (
    <section class="conversation" aria-label={`Conversation with ${title}`} data-group={groupId}>
      <header class="conv-head">
        <a href="#/chat" class="back">
          ← Conversations
        </a>
        <h2>
          {thread?.kind !== "group" && peerId && <Dot online={online.has(peerId)} />}{" "}
          {!thread && peerId ? <Name id={peerId} pictured /> : title}
        </h2>
        {thread?.kind !== "group" && peerId && (
          <PersonActions who={{ id: peerId, display_name: people.known.get(peerId)?.display_name ?? title }} />
        )}
        {threadId && (
          <button
            type="button"
            class="link"
            aria-pressed={threadMuted ?? thread?.muted ?? false}
            data-thread-muted={(threadMuted ?? thread?.muted) ? "yes" : "no"}
            onClick={() => {
              const on = !(threadMuted ?? thread?.muted ?? false);
              muteThread(client, threadId, on).then(
                () => (setThreadMuted(on), reloadThreads(0)),
                (err) => setError(fail(err)),
              );
            }}
          >
            {(threadMuted ?? thread?.muted) ? "Unmute conversation" : "Mute conversation"}
          </button>
        )}
      </header>
      {group && <Members group={group} onChange={setGroup} />}
      {paid && (
        <p class="price" data-price={paid.price}>
          {paid.display_name} is a paid agent: each message costs <strong>{dollars(paid.price ?? 0)}</strong> (
          {paid.asset_symbol ?? "USD"} on {paid.network ? networkName(paid.network) : "its network"}).
          {needsWallet &&
            (session.kind === "human" ? (
              <>
                {" "}
                <a href="#/profile">Link a wallet in Profile</a> to pay.
              </>
            ) : (
              " Only a person with a wallet can pay here."
            ))}
        </p>
      )}
      <Alert text={error} onClose={() => setError(null)} />
      {more && (
        <button type="button" onClick={() => void older()}>
          Load earlier messages
        </button>
      )}
      <ol
        class="messages"
        ref={list}
        aria-label="Messages"
        aria-live="polite"
        onScroll={(e) => {
          const el = e.currentTarget;
          if (el.scrollHeight === height.current) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
          if (el.scrollTop < 64) void older();
        }}
      >
        {shown.map((m, i) => {
          const prev = shown[i - 1];
          const first =
            !prev ||
            prev.from.id !== m.from.id ||
            Date.parse(m.created_at) - Date.parse(prev.created_at) > 10 * 60 * 1000;
          return <MessageItem key={m.id} m={m} first={first} seen={seenFor(m.id)} onReply={reply} onError={setError} />;
        })}
      </ol>
      <p class="typing" role="status">
        {who ? `${who.name} is typing…` : ""}
      </p>
      {replyTo && (
        <div class="replying" data-replying={replyTo.id}>
          <span>
            Replying to <strong>{replyTo.from.id === me ? "yourself" : replyTo.from.display_name}</strong>:{" "}
            {excerpt(replyTo.body || "(attachment)", 80)}
          </span>
          <button type="button" class="link" aria-label="Cancel reply" onClick={() => setReplyTo(null)}>
            ×
          </button>
        </div>
      )}
      <form class="send" onSubmit={send}>
        <label for="message" class="sr-only">
          Message
        </label>
        <textarea
          id="message"
          rows={2}
          value={text}
          placeholder="Write a message"
          aria-describedby="message-count"
          aria-invalid={over}
          onInput={(e) => onType(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape" && replyTo) {
              setReplyTo(null);
            } else if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <label for="attach" class="button">
          Attach
        </label>
        <input
          id="attach"
          class="sr-only"
          type="file"
          multiple
          ref={fileInput}
          onChange={(e) => setFiles([...(e.currentTarget.files ?? [])].slice(0, 10))}
        />
        <button
          type="submit"
          class="primary"
          disabled={sending || needsWallet || over || (!text.trim() && files.length === 0)}
        >
          {paid ? `Pay ${dollars(paid.price ?? 0)} and send` : "Send"}
        </button>
      </form>
      <div class="composer-foot">
        <span id="message-count" class={over ? "counter over" : "counter"} data-count={length}>
          {length} / {MAX_BODY}
          <span class="sr-only"> characters</span>
        </span>
        <Picked files={files} />
      </div>
    </section>
  );
}
