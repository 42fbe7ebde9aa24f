// A person's link: sharing one's own (ShareMe: "Copy my id" and "Copy my link", on the Friends page) and opening
// someone's (#/p/<id>/<name>: PersonPage, their card with "Add friend"). People search finds a person only for those
// who already know them (friends, or a shared conversation), so a link is how someone new reaches them. The name in a
// link is what its sender wrote into it: the card says so until search knows the person. The card keeps itself
// current: a friend request or a friendship (accepted on either side) arriving live reads it again.
import type { Person } from "@flock/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { actThenLoad, Alert } from "./ui.tsx";

/** The address of `id`'s card in this web app (the name rides along, for the card to show before search knows them). */
export function personLink(id: string, name: string): string {
  return `${location.origin}${location.pathname}#/p/${encodeURIComponent(id)}/${encodeURIComponent(name)}`;
}

/** Copies `text`; false when the browser refuses (the text stays on screen to copy by hand). */
async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** One's own id and link, each with a copy button. */
export function ShareMe() {
  const { session } = useApp();
  const [copied, setCopied] = useState<string | null>(null);
  const link = personLink(session.me.id, session.me.display_name);
  const put = async (what: string, text: string) =>
    setCopied((await copy(text)) ? `${what} copied.` : `Copying was refused: select the ${what.toLowerCase()} above.`);
  return (
    <section class="share-me" aria-labelledby="share-h">
      <h2 id="share-h">Your link</h2>
      <p class="muted">
        People find you in search once you are friends or share a conversation. Anyone else can add you from your link.
      </p>
      <p>
        Your id: <code data-my-id>{session.me.id}</code>{" "}
        <button type="button" onClick={() => void put("Id", session.me.id)}>
          Copy my id
        </button>
      </p>
      <p class="share-link">
        <a href={link} data-my-link>
          {link}
        </a>{" "}
        <button type="button" onClick={() => void put("Link", link)}>
          Copy my link
        </button>
      </p>
      {copied && <p role="status">{copied}</p>}
    </section>
  );
}

type Standing = "me" | "friend" | "asked-me" | "asked" | "none";

/** The card a person's link opens: who they are, and the one thing to do (add, accept, message). */
export function PersonPage({ id, name }: { id: string; name: string }) {
  const { client, fail, live, session, people } = useApp();
  const [found, setFound] = useState<Person | null>(null);
  const [standing, setStanding] = useState<Standing | null>(null);
  const [request, setRequest] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function load() {
    if (id === session.me.id) return setStanding("me");
    try {
      const [r, friends, requests] = await Promise.all([
        client.searchPeople(id, { limit: 5 }),
        client.friends(),
        client.friendRequests(),
      ]);
      const p = r.people.find((x) => x.id === id) ?? null;
      if (p) people.learn([p]);
      setFound(p);
      const incoming = requests.incoming.find((x) => x.from === id);
      setRequest(incoming?.id ?? null);
      setStanding(
        friends.some((f) => f.id === id)
          ? "friend"
          : incoming
            ? "asked-me"
            : requests.outgoing.some((x) => x.to === id)
              ? "asked"
              : "none",
      );
    } catch (err) {
      setError(fail(err));
    }
  }
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => void loadRef.current(), [id]);
  useEffect(
    () =>
      live.on((e) => {
        if ((e.type === "friendship" && e.friend.id === id) || (e.type === "friend_request" && e.from.id === id))
          void loadRef.current();
      }),
    [live, id],
  );

  const act = actThenLoad(setError, fail, load);

  const shownName = found?.display_name ?? (name || id);
  return (
    <section class="page" aria-labelledby="person-h">
      <h1 id="person-h">{shownName}</h1>
      <Alert text={error} onClose={() => setError(null)} />
      <div class="card person" data-person={id}>
        {found && <Avatar who={found} />}
        <span class="person-name">
          <strong>{shownName}</strong> <code>{id}</code>
          {!found && name && standing !== "me" && <span class="muted"> (the name their link gives)</span>}
        </span>
        {standing === "me" ? (
          <span class="muted">This is your own link: send it to whoever should add you.</span>
        ) : standing === "friend" ? (
          <a class="button" href={`#/chat/to/${encodeURIComponent(id)}`}>
            Message
          </a>
        ) : standing === "asked-me" && request ? (
          <button type="button" class="primary" onClick={() => void act(() => client.acceptFriend(request))}>
            Accept request
          </button>
        ) : standing === "asked" ? (
          <span class="muted">Request sent</span>
        ) : standing === "none" ? (
          <button type="button" class="primary" onClick={() => void act(() => client.friendRequest(id))}>
            Add friend
          </button>
        ) : (
          <span role="status">Loading…</span>
        )}
      </div>
    </section>
  );
}
