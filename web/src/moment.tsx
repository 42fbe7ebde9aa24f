// One moment of the feed: its author (picture and name), time and visibility, likes, comments (opened on demand,
// one's own shown at once and rolled back when refused), "Add friend" for a stranger, Delete for one's own, Report on
// another's and the author's Mute / Block / Report menu (safety.tsx); and the composer that posts one.
import type { Author, Comment, Moment, Visibility } from "@flock/client";
import { useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { PersonActions, ReportButton } from "./safety.tsx";
import { Alert, When } from "./ui.tsx";

/** An author shown before the server answers (its picture comes with the answer). */
export const asAuthor = (who: { id: string; display_name: string }): Author => {
  const author = { id: who.id, display_name: who.display_name, avatar_url: null };
  return author;
};

export function Composer({ onPost }: { onPost(content: string, v: Visibility): Promise<boolean> }) {
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

export function MomentCard(p: {
  m: Moment;
  liked: boolean;
  mine: boolean;
  friend: boolean;
  onLike(): void;
  onDelete(): void;
  onComment(n: number): void;
}) {
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
    const temp: Comment = {
      id: `pending-${Date.now()}`,
      body,
      author: asAuthor({ id: "", display_name: "You" }),
      created_at: new Date().toISOString(),
    };
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
        <Avatar who={m.author} /> <strong>{m.author.display_name}</strong> · <When iso={m.created_at} /> ·{" "}
        <span class="muted">{m.visibility}</span>
        {!p.mine && !p.friend && (
          <button type="button" class="link" onClick={() => void befriend()} disabled={asked}>
            {asked ? "Request sent" : "Add friend"}
          </button>
        )}
        {!p.mine && !pending && <PersonActions who={m.author} />}
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
        {!p.mine && !pending && <ReportButton target="moment" id={m.id} className="" />}
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
            <input
              id={`c-${m.id}`}
              value={text}
              placeholder="Write a comment"
              maxLength={2000}
              onInput={(e) => setText(e.currentTarget.value)}
            />
            <button type="submit" disabled={!text.trim()}>
              Comment
            </button>
          </form>
        </div>
      )}
    </li>
  );
}
