// Friends: requests in (accept, decline) and out, the friends list with live presence dots and pictures, and people
// search to send a request (a pasted id still works), and one's own id and link to share (person.tsx). The page keeps
// itself current: a friend request arriving (`friend_request` frame), a friendship made or ended (`friendship`: a
// request accepted clears its "Request sent." and the people found are searched again), someone not yet on the list
// coming online, the live connection coming back, the tab coming into view, and once a minute while it is in view. Each
// friend and each person found has the Mute / Block / Report menu (safety.tsx); blocking a friend ends the friendship.
// Below the friends: whom I blocked and muted.
import type { Author, FriendRequest, Person } from "@flock/client";
import { useEffect, useRef, useState } from "preact/hooks";
import { Avatar } from "./avatar.tsx";
import { useApp } from "./context.ts";
import { Name } from "./names.tsx";
import { ShareMe } from "./person.tsx";
import { PersonActions, SafetyLists } from "./safety.tsx";
import { PeopleSearch } from "./search.tsx";
import { actThenLoad, Alert, Dot, useVisible } from "./ui.tsx";

const POLL_MS = 60_000;

export function Friends() {
  const { client, online, fail, session, live, liveStatus, people, setFriendRequests } = useApp();
  const [friends, setFriends] = useState<Author[] | null>(null);
  const [incoming, setIncoming] = useState<FriendRequest[]>([]);
  const [outgoing, setOutgoing] = useState<FriendRequest[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);
  /** Raised by a friendship made or ended: the people found are searched again (their friend state changed). */
  const [changes, setChanges] = useState(0);
  const visible = useVisible();
  const known = useRef<ReadonlySet<string>>(new Set());

  async function load() {
    try {
      const [f, r] = await Promise.all([client.friends(), client.friendRequests()]);
      people.learn([...f, ...r.incoming.map((x) => x.sender)]);
      known.current = new Set(f.map((x) => x.id));
      setFriends(f);
      setIncoming(r.incoming);
      setFriendRequests(r.incoming.length);
      setOutgoing(r.outgoing);
    } catch (err) {
      setError(fail(err));
    }
  }
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    if (visible && liveStatus === "online") void loadRef.current();
  }, [visible, liveStatus === "online"]);
  useEffect(() => {
    if (!visible) return;
    const t = setInterval(() => void loadRef.current(), POLL_MS);
    return () => clearInterval(t);
  }, [visible]);
  useEffect(
    () =>
      live.on((e) => {
        if (e.type === "friendship") {
          setInfo(null); // a "Request sent." is stale once it is answered
          setChanges((n) => n + 1);
          void loadRef.current();
        } else if (
          e.type === "friend_request" ||
          (e.type === "presence" && e.status === "online" && !known.current.has(e.principal.id))
        )
          void loadRef.current();
      }),
    [live],
  );

  const act = actThenLoad(setError, fail, load);

  const pendingTo = new Set(outgoing.map((r) => r.to));
  const pendingFrom = new Map(incoming.map((r) => [r.from, r.id]));

  function action(p: Person) {
    return (
      <>
        {primary(p)}
        <PersonActions who={p} onChange={() => void load()} />
      </>
    );
  }

  function primary(p: Person) {
    if (p.id === session.me.id) return <span class="muted">You</span>;
    if (p.friend || known.current.has(p.id))
      return (
        <a class="button" href={`#/chat/to/${encodeURIComponent(p.id)}`} aria-label={`Message ${p.display_name}`}>
          Message
        </a>
      );
    const request = pendingFrom.get(p.id);
    if (request)
      return (
        <button
          type="button"
          class="primary"
          onClick={() => void act(() => client.acceptFriend(request))}
          aria-label={`Accept ${p.display_name}'s request`}
        >
          Accept request
        </button>
      );
    if (pendingTo.has(p.id)) return <span class="muted">Request sent</span>;
    return (
      <button
        type="button"
        class="primary"
        aria-label={`Add ${p.display_name} as a friend`}
        onClick={() =>
          void act(async () => {
            await client.friendRequest(p.id);
            setInfo(p.display_name === p.id ? "Request sent." : `Request sent to ${p.display_name}.`);
          })
        }
      >
        Add friend
      </button>
    );
  }

  return (
    <section class="page" aria-labelledby="friends-h">
      <h1 id="friends-h">Friends</h1>
      <Alert text={error} onClose={() => setError(null)} />
      {info && <p role="status">{info}</p>}
      <PeopleSearch
        id="friend-q"
        label="Find people"
        action={action}
        hint="Agents by name or id; people you are friends with or talk with by name; anyone else by their id or link."
        research={changes}
      />
      <ShareMe />
      <h2>Requests for you</h2>
      {incoming.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="list" aria-label="Incoming requests">
          {incoming.map((r) => (
            <li key={r.id} class="card" data-request={r.id}>
              <span>
                From <Name id={r.from} pictured />
              </span>
              <button type="button" class="primary" onClick={() => void act(() => client.acceptFriend(r.id))}>
                Accept
              </button>
              <button type="button" onClick={() => void act(() => client.declineFriend(r.id))}>
                Decline
              </button>
            </li>
          ))}
        </ul>
      )}
      <h2>Requests you sent</h2>
      {outgoing.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="list" aria-label="Outgoing requests">
          {outgoing.map((r) => (
            <li key={r.id} class="card" data-request={r.id}>
              To <Name id={r.to} pictured /> <span class="muted">pending</span>
              <button type="button" class="link" onClick={() => void act(() => client.declineFriend(r.id))}>
                Withdraw
              </button>
            </li>
          ))}
        </ul>
      )}
      <h2>Your friends</h2>
      {friends === null ? (
        <p role="status">Loading…</p>
      ) : friends.length === 0 ? (
        <p class="muted">No friends yet.</p>
      ) : (
        <ul class="list" aria-label="Friends">
          {friends.map((f) => (
            <li key={f.id} class="card friend" data-friend={f.id} data-online={online.has(f.id) ? "yes" : "no"}>
              <Avatar who={f} /> <Dot online={online.has(f.id)} /> <strong>{f.display_name}</strong>
              <a class="button" href={`#/chat/to/${encodeURIComponent(f.id)}`} aria-label={`Message ${f.display_name}`}>
                Message
              </a>
              <button
                type="button"
                class="link"
                onClick={() => void act(() => client.unfriend(f.id))}
                aria-label={`Remove ${f.display_name}`}
              >
                Remove
              </button>
              <PersonActions who={f} onChange={() => void load()} />
            </li>
          ))}
        </ul>
      )}
      <SafetyLists />
    </section>
  );
}
