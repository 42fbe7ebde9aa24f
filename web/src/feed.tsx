// The feed: newest first, older pages through the `before` cursor as the end of the list scrolls into view; a
// composer with visibility; likes, comments and deleting one's own moments, each applied at once and rolled back
// when the server refuses (a 429 says when to try again). Whether one liked a moment is the server's `liked_by_me`, the
// same in every browser. It stays current without a Refresh button: the live connection brings new counts
// (`moment_counts`) and friends' new moments (`moment`) as they happen; and every 30 s while in view, when the tab
// comes back into view and when the live connection comes back, it reads the first page again (the server answers it
// from its feed cache). Counts of the moments shown are updated in place, and moments newer than the top one wait
// behind a "N new moments" button, so the list never jumps under the reader. A person blocked or muted here leaves the
// list at once (the server leaves them out of every later read).
import type { Moment, Visibility } from "@flock/client";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { asAuthor, Composer, MomentCard } from "./moment.tsx";
import { newer } from "./threads.ts";
import { Alert, useVisible } from "./ui.tsx";

const PAGE = 20;
const POLL_MS = 30_000;
/** A moment liked or commented on here within this long keeps its own counts (a check may answer from before it). */
const SETTLE_MS = 10_000;

export function Feed() {
  const { client, session, fail, live, liveStatus, safety } = useApp();
  const [moments, setMoments] = useState<Moment[]>([]);
  const [fresh, setFresh] = useState<Moment[]>([]);
  const touched = useRef(new Map<string, number>());
  /** The newest counts' revision heard live per moment (frames of changes made at once may come in either order). */
  const revs = useRef(new Map<string, number>());
  const shown = useRef(moments);
  shown.current = moments;
  const visible = useVisible();
  const [more, setMore] = useState(true);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
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
        setMoments((m) =>
          reset ? page.moments : [...m, ...page.moments.filter((x) => !m.some((y) => y.id === x.id))],
        );
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

  // friends get no "Add friend" on their moments
  const [friends, setFriends] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    client.friends().then(
      (f) => setFriends(new Set(f.map((x) => x.id))),
      () => {}, // without the list, every author keeps the button (a request to a friend answers "already friends")
    );
  }, [client]);

  /** Reads the first page again: new moments wait behind the button, the counts of those shown are brought up to date. */
  const check = useCallback(async () => {
    if (busy.current) return;
    try {
      const page = await client.feed({ limit: PAGE });
      const now = Date.now();
      const byId = new Map(page.moments.map((m) => [m.id, m]));
      setMoments((ms) =>
        ms.map((m) => {
          const n = byId.get(m.id);
          if (
            !n ||
            now - (touched.current.get(m.id) ?? 0) < SETTLE_MS ||
            (n.like_count === m.like_count && n.comment_count === m.comment_count && n.liked_by_me === m.liked_by_me)
          )
            return m;
          return { ...m, like_count: n.like_count, comment_count: n.comment_count, liked_by_me: n.liked_by_me };
        }),
      );
      const top = shown.current.find((m) => !m.id.startsWith("pending-"))?.id;
      const ids = new Set(shown.current.map((m) => m.id));
      const waiting = page.moments.filter((m) => !ids.has(m.id) && newer(m.id, top));
      if (top) setFresh(waiting);
      else if (waiting.length) setMoments(page.moments); // nothing shown yet: nothing to jump
    } catch (err) {
      setError(fail(err));
    }
  }, [client, fail]);

  // every 30 s in view; and at once when the tab comes back into view or the live connection comes back
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    if (visible && liveStatus === "online") void check();
  }, [visible, liveStatus === "online"]);
  useEffect(() => {
    if (!visible) return;
    const t = setInterval(() => void check(), POLL_MS);
    return () => clearInterval(t);
  }, [visible, check]);

  // live: new counts in place (a frame follows its commit, so it stands even over counts patched here a moment ago);
  // a new moment waits behind the button (one of mine posted here is already in the list, as pending or made)
  useEffect(
    () =>
      live.on((e) => {
        if (e.type === "moment_counts") {
          if ((revs.current.get(e.id) ?? -1) >= e.rev) return; // an older change's frame, come late
          revs.current.set(e.id, e.rev);
          // newer than what a 30 s check already on its way read: that check leaves these counts alone
          touched.current.set(e.id, Date.now());
          const counts = { like_count: e.like_count, comment_count: e.comment_count };
          setMoments((ms) => ms.map((m) => (m.id === e.id ? { ...m, ...counts } : m)));
          setFresh((fs) => fs.map((m) => (m.id === e.id ? { ...m, ...counts } : m)));
        } else if (e.type === "moment") {
          const m = e.moment;
          const here = shown.current.some(
            (x) =>
              x.id === m.id || (x.id.startsWith("pending-") && x.author.id === m.author.id && x.content === m.content),
          );
          if (here) return;
          if (shown.current.length === 0) setMoments([m]);
          else setFresh((fs) => (fs.some((f) => f.id === m.id) ? fs : [m, ...fs]));
        }
      }),
    [live],
  );

  function showFresh() {
    setMoments((ms) => [...fresh, ...ms.filter((m) => !fresh.some((f) => f.id === m.id))]);
    setFresh([]);
    scrollTo({ top: 0 });
    document.getElementById("feed-h")?.focus();
  }

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
    touched.current.set(m.id, Date.now());
    const on = !m.liked_by_me;
    const revAt = revs.current.get(m.id);
    patch(m.id, (x) => ({ ...x, liked_by_me: on, like_count: x.like_count + (on ? 1 : -1) }));
    try {
      await (on ? client.like(m.id) : client.unlike(m.id));
    } catch (err) {
      // counts a frame brought meanwhile are the server's, without this refused change: only ours are undone
      const live = revs.current.get(m.id) !== revAt;
      patch(m.id, (x) => ({ ...x, liked_by_me: !on, like_count: live ? x.like_count : x.like_count - (on ? 1 : -1) }));
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
    const temp: Moment = {
      id: `pending-${Date.now()}`,
      content,
      visibility,
      created_at: new Date().toISOString(),
      author: asAuthor(session.me),
      like_count: 0,
      comment_count: 0,
      liked_by_me: false,
    };
    setMoments((ms) => [temp, ...ms]);
    try {
      const made = await client.post({ content, visibility });
      setMoments((ms) => ms.map((x) => (x.id === temp.id ? { ...temp, ...made } : x)));
      setFresh((fs) => fs.filter((f) => f.id !== made.id)); // its live frame may have come before this answer
      return true;
    } catch (err) {
      setMoments((ms) => ms.filter((x) => x.id !== temp.id));
      setError(fail(err));
      return false;
    }
  }

  return (
    <section aria-labelledby="feed-h" class="page">
      <h1 id="feed-h" tabIndex={-1}>
        Feed
      </h1>
      <Alert text={error} onClose={() => setError(null)} />
      <Composer onPost={post} />
      <div class="new-moments" aria-live="polite">
        {fresh.length > 0 && (
          <button type="button" class="pill primary" onClick={showFresh} data-fresh={fresh.length}>
            {fresh.length >= PAGE ? `${PAGE}+` : fresh.length} new {fresh.length === 1 ? "moment" : "moments"}
          </button>
        )}
      </div>
      <ol class="moments" aria-label="Moments, newest first">
        {moments
          .filter((m) => !safety.blocked.has(m.author.id) && !safety.muted.has(m.author.id))
          .map((m) => (
            <MomentCard
              key={m.id}
              m={m}
              liked={m.liked_by_me}
              mine={m.author.id === session.me.id}
              friend={friends.has(m.author.id)}
              onLike={() => void toggleLike(m)}
              onDelete={() => void remove(m)}
              onComment={(n) => (
                touched.current.set(m.id, Date.now()),
                patch(m.id, (x) => ({ ...x, comment_count: x.comment_count + n }))
              )}
            />
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
