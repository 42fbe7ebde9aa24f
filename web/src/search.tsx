// Search: people (agents by name or id; people one knows, by name) with an action per result, used by the friends
// page, the new conversation and the group forms; and the messages of one's own conversations, from the chat list,
// where a result opens its conversation. People are searched as the person types (after a short pause); a pasted id
// that search does not find is still offered, so a request can go to someone one has never talked with. When no one is
// found the rule is shown: who can be found by name, and that a person's link (person.tsx) reaches anyone else.
import type { Message, Person } from "@flock/client";
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { excerpt } from "./message.tsx";
import { isTransient, net } from "./net.ts";
import { Alert, ShortWhen } from "./ui.tsx";

const isId = (q: string) => /^P?[0-9]{1,19}$/.test(q);

/**
 * A search that failed for want of a connection runs again by itself once Flock answers again (net.ts): `failed`
 * keeps the run for then (only for a connection failure: a refused query would only fail again), and `forget` drops
 * it, when a newer search starts or the search is cleared: what the person wants now is that.
 */
function useAgainWhenBack(): { failed(err: unknown, run: () => void): void; forget(): void } {
  const later = useRef<(() => void) | null>(null);
  useEffect(
    () =>
      net.on(() => {
        const run = later.current;
        later.current = null;
        run?.();
      }),
    [],
  );
  return {
    failed: (err, run) => void (later.current = isTransient(err) ? run : null),
    forget: () => void (later.current = null),
  };
}

export function PeopleSearch({
  id,
  label,
  action,
  hint,
  research = 0,
}: {
  id: string;
  label: string;
  action(p: Person): ComponentChildren;
  hint?: string;
  /** A change of it searches the shown text again (what is found changed: a friendship made, say). */
  research?: number;
}) {
  const { client, fail, people } = useApp();
  const [q, setQ] = useState("");
  const [found, setFound] = useState<{ q: string; people: Person[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);
  const again = useAgainWhenBack();

  async function search(query: string) {
    const n = ++seq.current;
    again.forget();
    if (!query) return setFound(null);
    try {
      const r = await client.searchPeople(query, { limit: 20 });
      if (n !== seq.current) return; // a later search answers
      people.learn(r.people);
      setFound({ q: query, people: r.people });
    } catch (err) {
      if (n !== seq.current) return;
      setError(fail(err));
      again.failed(err, () => void search(query));
    }
  }

  useEffect(() => {
    const query = q.trim();
    const t = setTimeout(() => void search(query), query ? 300 : 0);
    return () => clearTimeout(t);
  }, [q]);
  useEffect(() => {
    if (research > 0 && found) void search(found.q);
  }, [research]);

  const list = found?.people ?? [];
  const pasted = found && isId(found.q) && !list.some((p) => p.id === found.q) ? found.q : null;
  return (
    <div class="people-search">
      <form
        class="row"
        role="search"
        aria-label="People search"
        onSubmit={(e) => {
          e.preventDefault();
          void search(q.trim());
        }}
      >
        <label for={id}>{label}</label>
        <input
          id={id}
          type="search"
          value={q}
          autoComplete="off"
          placeholder="A name, or an id"
          aria-describedby={hint ? `${id}-hint` : undefined}
          onInput={(e) => setQ(e.currentTarget.value)}
        />
        <button type="submit" disabled={!q.trim()}>
          Search
        </button>
      </form>
      {hint && (
        <p id={`${id}-hint`} class="muted hint">
          {hint}
        </p>
      )}
      <Alert text={error} onClose={() => setError(null)} />
      {found && (
        <>
          <p class="sr-only" role="status">
            {list.length === 0 && !pasted ? "No one found" : `${list.length + (pasted ? 1 : 0)} found`}
          </p>
          {list.length === 0 && !pasted ? (
            <p class="muted no-one" data-no-one>
              No one found for “{found.q}”. Agents are found by name or id by everyone; a person only by those who are
              already their friends or share a conversation with them, so a search tells no stranger who exists. To
              reach someone new, paste their id or open their link; to be found, share yours (
              <a href="#/friends">Your link</a>, on the Friends page).
            </p>
          ) : (
            <ul class="list found" aria-label="People found">
              {list.map((p) => (
                <li key={p.id} class="card person" data-person={p.id}>
                  <Avatar who={p} />
                  <span class="person-name">
                    <strong>{p.display_name}</strong>{" "}
                    <span class="muted">{p.kind === "agent" ? "agent" : p.friend ? "friend" : "person"}</span>
                  </span>
                  {action(p)}
                </li>
              ))}
              {pasted && (
                <li class="card person" data-person={pasted}>
                  <span class="person-name">
                    <strong>The id {pasted}</strong>
                  </span>
                  {action({
                    id: pasted,
                    display_name: pasted,
                    avatar_url: null,
                    kind: pasted.startsWith("P") ? "human" : "agent",
                    friend: false,
                  })}
                </li>
              )}
            </ul>
          )}
        </>
      )}
    </div>
  );
}

/** Search over the messages of one's own conversations; a result opens its conversation. */
export function MessageSearch() {
  const { client, fail, threads, session, people } = useApp();
  const [q, setQ] = useState("");
  const [found, setFound] = useState<{ q: string; messages: Message[]; more: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const again = useAgainWhenBack();

  const seq = useRef(0);

  /** Clear the search: its results, and a run waiting for the connection. */
  function clear() {
    seq.current++;
    again.forget();
    setFound(null);
  }

  async function search(query: string, before?: string) {
    const n = ++seq.current;
    again.forget();
    if (!query) return setFound(null);
    setBusy(true);
    try {
      const r = await client.searchMessages(query, { limit: 20, ...(before ? { before } : {}) });
      if (n !== seq.current) return; // cleared, or a later search answers
      people.learn(r.messages.map((m) => m.from));
      setFound((f) => ({
        q: query,
        messages: before && f ? [...f.messages, ...r.messages] : r.messages,
        more: r.has_more,
      }));
    } catch (err) {
      if (n !== seq.current) return;
      setError(fail(err));
      again.failed(err, () => void search(query, before));
    } finally {
      setBusy(false);
    }
  }

  /** Where a message was: "in # group", or "to Bob" for one of mine in a direct conversation (else its sender says it). */
  const where = (m: Message) => {
    const t = threads?.find((x) => x.id === m.thread_id);
    if (t?.kind === "group") return `in # ${t.group?.name ?? "group"}`;
    return m.from.id === session.me.id && t?.peer ? `to ${t.peer.display_name}` : "";
  };

  return (
    <div class="message-search">
      <form
        class="row"
        role="search"
        aria-label="Message search"
        onSubmit={(e) => {
          e.preventDefault();
          void search(q.trim());
        }}
      >
        <label for="message-q" class="sr-only">
          Search messages
        </label>
        <input
          id="message-q"
          type="search"
          value={q}
          placeholder="Search messages"
          onInput={(e) => {
            setQ(e.currentTarget.value);
            if (!e.currentTarget.value) clear();
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              setQ("");
              clear();
            }
          }}
        />
        <button type="submit" disabled={!q.trim() || busy}>
          Search
        </button>
      </form>
      <Alert text={error} onClose={() => setError(null)} />
      {found && (
        <section aria-label="Messages found" class="found-messages">
          <p role="status" class="muted">
            {found.messages.length === 0
              ? `No messages found for “${found.q}”.`
              : `${found.messages.length}${found.more ? "+" : ""} found for “${found.q}”`}{" "}
            <button type="button" class="link" onClick={() => (setQ(""), clear())}>
              Clear
            </button>
          </p>
          <ul>
            {found.messages.map((m) => (
              <li key={m.id}>
                <a href={`#/chat/t/${m.thread_id}`} data-found={m.id}>
                  <span class="thread-top">
                    <strong>{m.from.id === session.me.id ? "You" : m.from.display_name}</strong>{" "}
                    <ShortWhen iso={m.created_at} />
                  </span>
                  {where(m) && <span class="muted where">{where(m)}</span>}
                  <span class="last">{excerpt(m.body || "(attachment)", 140)}</span>
                </a>
              </li>
            ))}
          </ul>
          {found.more && (
            <button
              type="button"
              disabled={busy}
              onClick={() => void search(found.q, found.messages[found.messages.length - 1]?.id)}
            >
              More results
            </button>
          )}
        </section>
      )}
    </div>
  );
}
