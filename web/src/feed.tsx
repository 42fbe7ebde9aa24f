// The feed: newest first, older pages through the `before` cursor as the end of the list scrolls into view; a
// composer with visibility; likes, comments and deleting one's own moments, each applied at once and rolled back
// when the server refuses (a 429 says when to try again).
import type { Comment, Moment, Visibility } from "@flock/client";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Alert, When } from "./ui.tsx";

const PAGE = 20;

function useLiked(me: string) {
  const key = `flock.liked.${me}`;
  const [liked, setLiked] = useState<ReadonlySet<string>>(() => new Set(JSON.parse(localStorage.getItem(key) ?? "[]") as string[]));
  const set = (id: string, on: boolean) =>
    setLiked((s) => {
      const n = new Set(s);
      if (on) n.add(id);
      else n.delete(id);
      localStorage.setItem(key, JSON.stringify([...n].slice(-500)));
      return n;
    });
  return [liked, set] as const;
}

export function Feed() {
  const { client, session, fail } = useApp();
  const [moments, setMoments] = useState<Moment[]>([]);
  const [more, setMore] = useState(true);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [liked, setLiked] = useLiked(session.me.id);
  const end = useRef<HTMLDivElement>(null);
  const busy = useRef(false);

  const load = useCallback(
    async (reset: boolean) => {
      if (busy.current) return;
      busy.current = true;
      setLoading(true);
      try {
        const before = reset ? undefined : moments[moments.length - 1]?.id;
        const page = await client.feed({ limit: PAGE, ...(before ? { before } : {}) });
        setMoments((m) => (reset ? page.moments : [...m, ...page.moments.filter((x) => !m.some((y) => y.id === x.id))]));
        setMore(page.has_more);
      } catch (err) {
        setError(fail(err));
      } finally {
        busy.current = false;
        setLoading(false);
      }
    },
    [client, moments, fail],
  );

  useEffect(() => void load(true), []);

  useEffect(() => {
    const el = end.current;
    if (!el || !more) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void load(false);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [load, more]);

  const patch = (id: string, f: (m: Moment) => Moment) => setMoments((ms) => ms.map((m) => (m.id === id ? f(m) : m)));

  async function toggleLike(m: Moment) {
    const on = !liked.has(m.id);
    setLiked(m.id, on);
    patch(m.id, (x) => ({ ...x, like_count: x.like_count + (on ? 1 : -1) }));
    try {
      await (on ? client.like(m.id) : client.unlike(m.id));
    } catch (err) {
      setLiked(m.id, !on);
      patch(m.id, (x) => ({ ...x, like_count: x.like_count - (on ? 1 : -1) }));
      setError(fail(err));
    }
  }

  async function remove(m: Moment) {
    const before = moments;
    setMoments((ms) => ms.filter((x) => x.id !== m.id));
    try {
      await client.deleteMoment(m.id);
    } catch (err) {
      setMoments(before);
      setError(fail(err));
    }
  }

  async function post(content: string, visibility: Visibility): Promise<boolean> {
    const temp: Moment = { id: `pending-${Date.now()}`, content, visibility, created_at: new Date().toISOString(), author: session.me, like_count: 0, comment_count: 0 };
    setMoments((ms) => [temp, ...ms]);
    try {
      const made = await client.post({ content, visibility });
      setMoments((ms) => ms.map((x) => (x.id === temp.id ? { ...temp, ...made } : x)));
      return true;
    } catch (err) {
      setMoments((ms) => ms.filter((x) => x.id !== temp.id));
      setError(fail(err));
      return false;
    }
  }

  return (
    <section aria-labelledby="feed-h" class="page">
      <h1 id="feed-h">Feed</h1>
      <Alert text={error} onClose={() => setError(null)} />
      <Composer onPost={post} />
      <div class="row">
        <button type="button" onClick={() => void load(true)} disabled={loading}>
          Refresh
        </button>
      </div>
      <ol class="moments" aria-label="Moments, newest first">
        {moments.map((m) => (
          <MomentCard key={m.id} m={m} liked={liked.has(m.id)} mine={m.author.id === session.me.id} onLike={() => void toggleLike(m)} onDelete={() => void remove(m)} onComment={(n) => patch(m.id, (x) => ({ ...x, comment_count: x.comment_count + n }))} />
        ))}
      </ol>
      <div ref={end} class="end">
        {loading ? (
          <p role="status">Loading…</p>
        ) : more ? (
          <button type="button" onClick={() => void load(false)}>
            Load older moments
          </button>
        ) : (
          <p class="muted">{moments.length ? "That's everything." : "Nothing here yet: post the first moment."}</p>
        )}
      </div>
    </section>
  );
}

function Composer({ onPost }: { onPost(content: string, v: Visibility): Promise<boolean> }) {
  const [text, setText] = useState("");
  const [visibility, setVisibility] = useState<Visibility>("public");
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        const content = text.trim();
        if (!content) return;
        setText("");
        void onPost(content, visibility).then((ok) => ok || setText(content));
      }}
    >
      <label for="compose">Share a moment</label>
      <textarea id="compose" rows={3} maxLength={5000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <div class="row">
        <label for="visibility">Visible to</label>
        <select id="visibility" value={visibility} onChange={(e) => setVisibility(e.currentTarget.value as Visibility)}>
          <option value="public">Everyone</option>
          <option value="friends">Friends</option>
          <option value="private">Only me</option>
        </select>
        <button type="submit" class="primary" disabled={!text.trim()}>
          Post
        </button>
      </div>
    </form>
  );
}

function MomentCard(p: { m: Moment; liked: boolean; mine: boolean; onLike(): void; onDelete(): void; onComment(n: number): void }) {
  const { client, fail } = useApp();
  const { m } = p;
  const [open, setOpen] = useState(false);
  const [comments, setComments] = useState<Comment[] | null>(null);
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(false);
  const pending = m.id.startsWith("pending-");

  async function toggleComments() {
    const next = !open;
    setOpen(next);
    if (next && comments === null) {
      try {
        setComments(await client.comments(m.id, { limit: 50 }));
      } catch (err) {
        setError(fail(err));
      }
    }
  }

  async function addComment(e: Event) {
    e.preventDefault();
    const body = text.trim();
    if (!body) return;
    const temp: Comment = { id: `pending-${Date.now()}`, body, author: { id: "", display_name: "You" }, created_at: new Date().toISOString() };
    setText("");
    setComments((c) => [...(c ?? []), temp]);
    p.onComment(1);
    try {
      const made = await client.comment(m.id, body);
      setComments((c) => (c ?? []).map((x) => (x.id === temp.id ? made : x)));
    } catch (err) {
      setComments((c) => (c ?? []).filter((x) => x.id !== temp.id));
      p.onComment(-1);
      setText(body);
      setError(fail(err));
    }
  }

  async function befriend() {
    try {
      await client.friendRequest(m.author.id);
      setAsked(true);
    } catch (err) {
      setError(fail(err));
    }
  }

  return (
    <li class="card moment" data-moment={m.id} aria-busy={pending}>
      <header>
        <strong>{m.author.display_name}</strong> <span class="muted">{m.author.id}</span> · <When iso={m.created_at} /> · <span class="muted">{m.visibility}</span>
        {!p.mine && (
          <button type="button" class="link" onClick={() => void befriend()} disabled={asked}>
            {asked ? "Request sent" : "Add friend"}
          </button>
        )}
      </header>
      <p class="content">{m.content}</p>
      <Alert text={error} onClose={() => setError(null)} />
      <div class="actions">
        <button type="button" aria-pressed={p.liked} onClick={p.onLike} disabled={pending}>
          {p.liked ? "Unlike" : "Like"} <span class="count">{m.like_count}</span>
        </button>
        <button type="button" aria-expanded={open} onClick={() => void toggleComments()} disabled={pending}>
          Comments <span class="count">{m.comment_count}</span>
        </button>
        {p.mine && (
          <button type="button" class="danger" onClick={p.onDelete} disabled={pending}>
            Delete
          </button>
        )}
      </div>
      {open && (
        <div class="comments">
          <ul>
            {(comments ?? []).map((c) => (
              <li key={c.id}>
                <strong>{c.author.display_name}</strong> {c.body}
              </li>
            ))}
          </ul>
          <form onSubmit={addComment} class="row">
            <label class="sr-only" for={`c-${m.id}`}>
              Comment
            </label>
            <input id={`c-${m.id}`} value={text} placeholder="Write a comment" maxLength={2000} onInput={(e) => setText(e.currentTarget.value)} />
            <button type="submit" disabled={!text.trim()}>
              Comment
            </button>
          </form>
        </div>
      )}
    </li>
  );
}
