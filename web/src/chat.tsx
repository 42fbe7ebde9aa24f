// Chat: the threads list (most recent activity first, each with its last message) beside one conversation, direct
// or group: history paged backwards, live messages from the WebSocket, typing both ways, attachments (upload,
// inline images, downloads), groups created and their members managed, and paid agents paid through the wallet
// (the price is shown before sending; the message then carries a settled badge with its explorer link).
import { Flock, FlockError, type AgentProfile, type Author, type Group, type Message, type Thread } from "@flock/client";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Alert, Dot, dollars, When } from "./ui.tsx";
import { WalletPayer } from "./wallet.ts";

type Attachment = NonNullable<Message["attachments"]>[number];

const order = (a: Message, b: Message) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1);

function merge(into: readonly Message[], more: readonly Message[]): Message[] {
  const byId = new Map(into.map((m) => [m.id, m]));
  for (const m of more) byId.set(m.id, { ...byId.get(m.id), ...m });
  return [...byId.values()].sort(order);
}

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

function NewGroup() {
  const { client, fail } = useApp();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [members, setMembers] = useState("");
  const [friends, setFriends] = useState<Author[]>([]);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (open) client.friends().then(setFriends, (err: unknown) => setError(fail(err)));
  }, [open]);

  async function create(e: Event) {
    e.preventDefault();
    const ids = [...picked, ...members.split(/[\s,]+/).filter(Boolean)];
    try {
      const g = await client.createGroup({ name: name.trim(), members: [...new Set(ids)] });
      setOpen(false);
      setName("");
      setMembers("");
      setPicked(new Set());
      location.hash = `#/chat/t/${g.thread_id}`;
    } catch (err) {
      setError(fail(err));
    }
  }

  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New group
      </button>
    );
  return (
    <form class="card" onSubmit={create} aria-label="New group">
      <Alert text={error} onClose={() => setError(null)} />
      <label for="group-name">Group name</label>
      <input id="group-name" value={name} required maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
      {friends.length > 0 && (
        <fieldset>
          <legend>Friends to add</legend>
          {friends.map((f) => (
            <label key={f.id} class="check">
              <input
                type="checkbox"
                checked={picked.has(f.id)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setPicked((s) => {
                    const n = new Set(s);
                    if (on) n.add(f.id);
                    else n.delete(f.id);
                    return n;
                  });
                }}
              />{" "}
              {f.display_name}
            </label>
          ))}
        </fieldset>
      )}
      <label for="group-ids">Other members (ids, comma separated)</label>
      <input id="group-ids" value={members} onInput={(e) => setMembers(e.currentTarget.value)} />
      <div class="row">
        <button type="submit" class="primary" disabled={!name.trim()}>
          Create group
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Conversation({ thread, peerId, onSent }: { thread?: Thread; peerId?: string; onSent(): void }) {
  const { client, session, received, typing, online, live, fail } = useApp();
  const [messages, setMessages] = useState<Message[]>([]);
  const [more, setMore] = useState(false);
  const [text, setText] = useState("");
  const [files, setFiles] = useState<File[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [paid, setPaid] = useState<AgentProfile | null>(null);
  const [group, setGroup] = useState<Group | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const typingSent = useRef(0);
  const idle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const list = useRef<HTMLOListElement>(null);
  const threadId = thread?.id;
  const groupId = thread?.kind === "group" ? thread.group?.id : undefined;
  const title = thread?.kind === "group" ? `# ${thread.group?.name ?? "group"}` : (thread?.peer?.display_name ?? peerId ?? "");

  async function page(before?: string) {
    if (!threadId) return;
    try {
      const h = await client.threadMessages(threadId, { limit: 30, ...(before ? { before } : {}) });
      setMessages((m) => merge(m, h.messages));
      setMore(h.has_more ?? false);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void page(), [threadId]);

  useEffect(() => {
    if (!peerId || peerId.startsWith("P")) return;
    client.agent(peerId).then(
      (a) => setPaid(a.x402_enabled && a.price !== null ? a : null),
      () => setPaid(null),
    );
  }, [peerId]);

  useEffect(() => {
    if (groupId) client.group(groupId).then(setGroup, (err: unknown) => setError(fail(err)));
  }, [groupId]);

  // live messages for this conversation
  const live_ = useMemo(() => received.filter((m) => (threadId ? m.thread_id === threadId : m.from.id === peerId)), [received, threadId, peerId]);
  const shown = useMemo(() => merge(messages, live_), [messages, live_]);

  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [shown.length]);

  const payer = useMemo(() => {
    if (!paid || !session.address) return null;
    const price = paid.price ?? 0;
    return new Flock({ baseUrl: session.api, token: session.token, retry: { maxAttempts: 1 }, payments: new WalletPayer(session.address, async (d) => d <= price + 1e-9) });
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
      for (const f of files) attachments.push((await client.upload(f, { name: f.name, contentType: f.type || "application/octet-stream" })).id);
      const extra = attachments.length ? { attachments } : {};
      const once = async (): Promise<Message | null> => {
        if (groupId) return client.sendGroup(groupId, body, extra);
        if (peerId) return (payer ?? client).send(peerId, body, extra);
        return null;
      };
      // a 503 (a node shutting down, a backend outage) did not take the message: try again, backing off
      let sent: Message | null = null;
      for (let attempt = 0; ; attempt++) {
        try {
          sent = await once();
          break;
        } catch (err) {
          if (!(err instanceof FlockError && err.status === 503) || attempt >= 4) throw err;
          await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
        }
      }
      if (!sent) return;
      setText("");
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

  const who = typing.get(threadId ?? "");
  const needsWallet = paid !== null && !payer;

  return (
    <div class="conversation" aria-label={`Conversation with ${title}`}>
      <header class="conv-head">
        <a href="#/chat" class="back">
          ← Conversations
        </a>
        <h2>
          {thread?.kind !== "group" && peerId && <Dot online={online.has(peerId)} />} {title}
        </h2>
      </header>
      {group && <Members group={group} onChange={setGroup} />}
      {paid && (
        <p class="price" data-price={paid.price}>
          {paid.display_name} is a paid agent: each message costs <strong>{dollars(paid.price ?? 0)}</strong> ({paid.asset_symbol ?? "USD"} on {paid.network}).
          {needsWallet && " Sign in with a wallet to pay."}
        </p>
      )}
      <Alert text={error} onClose={() => setError(null)} />
      {more && (
        <button type="button" onClick={() => void page(messages[0]?.id)}>
          Load earlier messages
        </button>
      )}
      <ol class="messages" ref={list} aria-label="Messages" aria-live="polite">
        {shown.map((m) => (
          <li key={m.id} class={m.from.id === session.me.id ? "msg mine" : "msg"} data-message={m.id}>
            <span class="from">{m.from.id === session.me.id ? "You" : m.from.display_name}</span> <When iso={m.created_at} />
            {m.body && <p>{m.body}</p>}
            {(m.attachments ?? []).map((a) => (
              <AttachmentView key={a.id} a={a} />
            ))}
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
          </li>
        ))}
      </ol>
      <p class="typing" role="status">
        {who ? `${who.name} is typing…` : ""}
      </p>
      <form class="send" onSubmit={send}>
        <label for="message" class="sr-only">
          Message
        </label>
        <textarea id="message" rows={2} value={text} maxLength={10000} placeholder="Write a message" onInput={(e) => onType(e.currentTarget.value)} onKeyDown={(e) => e.key === "Enter" && !e.shiftKey && (e.preventDefault(), e.currentTarget.form?.requestSubmit())} />
        <label for="attach" class="button">
          Attach
        </label>
        <input id="attach" class="sr-only" type="file" multiple ref={fileInput} onChange={(e) => setFiles([...(e.currentTarget.files ?? [])].slice(0, 10))} />
        <button type="submit" class="primary" disabled={sending || needsWallet || (!text.trim() && files.length === 0)}>
          {paid ? `Pay ${dollars(paid.price ?? 0)} and send` : "Send"}
        </button>
      </form>
      {files.length > 0 && <p class="muted">Attached: {files.map((f) => f.name).join(", ")}</p>}
    </div>
  );
}

function Members({ group, onChange }: { group: Group; onChange(g: Group): void }) {
  const { client, session, fail } = useApp();
  const [id, setId] = useState("");
  const [error, setError] = useState<string | null>(null);
  const owner = group.owner === session.me.id;
  return (
    <details class="members">
      <summary>{group.members.length} members</summary>
      <Alert text={error} onClose={() => setError(null)} />
      <ul>
        {group.members.map((m) => (
          <li key={m.id}>
            {m.display_name} <span class="muted">{m.id}</span>
            {(owner || m.id === session.me.id) && m.id !== group.owner && (
              <button
                type="button"
                class="link"
                onClick={() =>
                  void client
                    .removeGroupMember(group.id, m.id)
                    .then(() => onChange({ ...group, members: group.members.filter((x) => x.id !== m.id) }))
                    .catch((err: unknown) => setError(fail(err)))
                }
              >
                {m.id === session.me.id ? "Leave" : "Remove"}
              </button>
            )}
          </li>
        ))}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void client
            .addGroupMembers(group.id, [id.trim()])
            .then((g) => (onChange(g), setId("")))
            .catch((err: unknown) => setError(fail(err)));
        }}
      >
        <label for="member-id">Add member by id</label>
        <input id="member-id" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <button type="submit" disabled={!id.trim()}>
          Add
        </button>
      </form>
    </details>
  );
}

function AttachmentView({ a }: { a: Attachment }) {
  const { client, fail } = useApp();
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const image = a.content_type.startsWith("image/");

  async function blobUrl(): Promise<string> {
    const res = await client.download(a.id);
    return URL.createObjectURL(await res.blob());
  }
  useEffect(() => {
    if (!image) return;
    let made: string | null = null;
    blobUrl().then(
      (u) => setUrl((made = u)),
      (err: unknown) => setError(fail(err)),
    );
    return () => {
      if (made) URL.revokeObjectURL(made);
    };
  }, [a.id]);

  async function download() {
    try {
      const u = await blobUrl();
      const link = document.createElement("a");
      link.href = u;
      link.download = a.name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(u), 10_000);
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <div class="attachment">
      {image && url && <img src={url} alt={a.name} loading="lazy" />}
      <button type="button" class="link" onClick={() => void download()}>
        Download {a.name} ({Math.ceil(a.size / 1024)} KB)
      </button>
      {error && <span role="alert">{error}</span>}
    </div>
  );
}
