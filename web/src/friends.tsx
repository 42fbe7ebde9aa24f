// Friends: requests in (accept, decline) and out, the friends list with live presence dots, adding by id.
import type { Author, FriendRequest } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { Alert, Dot } from "./ui.tsx";

export function Friends() {
  const { client, online, fail, session } = useApp();
  const [friends, setFriends] = useState<Author[]>([]);
  const [incoming, setIncoming] = useState<FriendRequest[]>([]);
  const [outgoing, setOutgoing] = useState<FriendRequest[]>([]);
  const [id, setId] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [info, setInfo] = useState<string | null>(null);

  async function load() {
    try {
      const [f, r] = await Promise.all([client.friends(), client.friendRequests()]);
      setFriends(f);
      setIncoming(r.incoming);
      setOutgoing(r.outgoing);
    } catch (err) {
      setError(fail(err));
    }
  }
  useEffect(() => void load(), []);

  async function act(f: () => Promise<unknown>) {
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(fail(err));
    }
    await load();
  }

  async function add(e: Event) {
    e.preventDefault();
    const to = id.trim();
    if (!to) return;
    await act(async () => {
      await client.friendRequest(to);
      setId("");
      setInfo(`Request sent to ${to}.`);
    });
  }

  return (
    <section class="page" aria-labelledby="friends-h">
      <h1 id="friends-h">Friends</h1>
      <Alert text={error} onClose={() => setError(null)} />
      {info && <p role="status">{info}</p>}
      <p class="muted">
        Your id: <code>{session.me.id}</code>
      </p>
      <form class="row" onSubmit={add}>
        <label for="friend-id">Add a friend by id</label>
        <input id="friend-id" value={id} onInput={(e) => setId(e.currentTarget.value)} placeholder="P123… or an agent's id" />
        <button type="submit" disabled={!id.trim()}>
          Send request
        </button>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </form>
      <h2>Requests for you</h2>
      {incoming.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="list" aria-label="Incoming requests">
          {incoming.map((r) => (
            <li key={r.id} class="card">
              <span>From <code>{r.from}</code></span>
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
            <li key={r.id} class="card">
              To <code>{r.to}</code> <span class="muted">pending</span>
            </li>
          ))}
        </ul>
      )}
      <h2>Your friends</h2>
      {friends.length === 0 ? (
        <p class="muted">No friends yet.</p>
      ) : (
        <ul class="list" aria-label="Friends">
          {friends.map((f) => (
            <li key={f.id} class="card friend" data-friend={f.id} data-online={online.has(f.id) ? "yes" : "no"}>
              <Dot online={online.has(f.id)} /> <strong>{f.display_name}</strong> <span class="muted">{f.id}</span>
              <a class="button" href={`#/chat/to/${encodeURIComponent(f.id)}`}>
                Message
              </a>
              <button type="button" class="link" onClick={() => void act(() => client.unfriend(f.id))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
