// The app shell: sign-in, or the signed-in pages behind a navigation bar (hash routes #/feed, #/friends, #/chat,
// #/agents, #/payments, #/profile, and #/moderation for a moderator, linked only then; #/p/<id>/<name>, a person's
// link, opens their card: person.tsx; any other route is "Page not found"). Owns the live connection: presence, typing, and messages, each acked once rendered; edits,
// deletions and reactions (`message_update`), read markers (`read`) and the conversations list with its unread counts,
// shown on the Chat link and in the tab title, and a notification for a message that arrives while the tab is hidden;
// friend requests waiting for an answer on the Friends link (a notification too, while hidden).
import type { Message, PendingMessage } from "@flock/client";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Agents } from "./agents.tsx";
import { Chat } from "./chat.tsx";
import { App as AppContext, type AppState, type TypingState } from "./context.ts";
import { Feed } from "./feed.tsx";
import { Friends } from "./friends.tsx";
import { Live } from "./live.ts";
import { Moderation } from "./moderation.tsx";
import { usePeople } from "./names.tsx";
import { net } from "./net.ts";
import { NotFound } from "./not-found.tsx";
import { notifyFriendRequest, notifyMessage } from "./notify.tsx";
import { Payments } from "./payments.tsx";
import { PersonPage } from "./person.tsx";
import { Profile } from "./profile.tsx";
import { useSafety } from "./safety.tsx";
import {
  clearSession,
  clientFor,
  describe,
  isUnauthorized,
  changed,
  loadSession,
  saveSession,
  type Session,
  type SessionChange,
  whoAmI,
} from "./session.ts";
import { SignIn } from "./signin.tsx";
import { unreadText, useThreads } from "./threads.ts";
import { Unread, useVisible } from "./ui.tsx";

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

/** The conversation on screen now (`#/chat/t/<id>` in a visible tab): a message to it is read at once. */
function openThread(): string | null {
  if (document.visibilityState === "hidden") return null;
  const m = /^#\/?chat\/t\/([^/]+)/.exec(location.hash);
  return m?.[1] ? decodeURIComponent(m[1]) : null;
}

const PAGES = [
  ["feed", "Feed"],
  ["friends", "Friends"],
  ["chat", "Chat"],
  ["agents", "Agents"],
  ["payments", "Payments"],
  ["profile", "Profile"],
] as const;

export function Root() {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [notice, setNotice] = useState<string | null>(null);
  const signOut = useCallback((why: string | null) => {
    clearSession();
    setSession(null);
    setNotice(why);
  }, []);
  // a change for a session that is no longer the one signed in (signed out meanwhile) is dropped
  const update = useCallback(
    (token: string, c: SessionChange) =>
      setSession((s) => {
        if (!s || s.token !== token) return s;
        const n = changed(s, c);
        if (n !== s) saveSession(n);
        return n;
      }),
    [],
  );
  if (!session) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(s) => {
          saveSession(s);
          setNotice(null);
          setSession(s);
          if (!location.hash) location.hash = "#/feed";
        }}
      />
    );
  }
  return <Shell key={session.token} session={session} signOut={signOut} update={update} />;
}

function Shell({
  session,
  signOut,
  update,
}: {
  session: Session;
  signOut(why: string | null): void;
  update(token: string, c: SessionChange): void;
}) {
  const hash = useHash();
  // a changed name or a linked wallet is the same session: the client and the connection stay
  const client = useMemo(() => clientFor(session.api, session.token), [session.api, session.token]);
  const live = useMemo(() => new Live(session.api, session.token), [session.api, session.token]);
  // counts the renames made here, so that the start's whoAmI, asked before one, does not put the old name back
  const renames = useRef(0);
  const updateSession = useCallback(
    (c: SessionChange) => {
      if (c.me) renames.current++;
      update(session.token, c);
    },
    [update, session.token],
  );
  const [online, setOnline] = useState<ReadonlySet<string>>(new Set());
  const [typing, setTyping] = useState<ReadonlyMap<string, TypingState>>(new Map());
  const [received, setReceived] = useState<readonly PendingMessage[]>([]);
  const [liveStatus, setLiveStatus] = useState("connecting");
  const acked = useRef(new Set<string>());
  const expired = useCallback(() => signOut("Your session expired. Please sign in again."), [signOut]);
  const fail = useCallback(
    (err: unknown) => {
      if (isUnauthorized(err)) expired();
      return describe(err);
    },
    [expired],
  );
  const { on: threadsOn, ...threads } = useThreads(client, session.me.id, fail);
  const people = usePeople(client, session.me.id);
  const safety = useSafety(client);
  // the name and wallet as the API has them now (renamed on another device, or before this reload)
  useEffect(() => {
    let on = true;
    const asked = renames.current;
    whoAmI(client, session).then(
      (now) => {
        if (!on) return;
        if (renames.current !== asked) {
          // renamed here meanwhile: the answer's name is older than the session's; only a wallet found is news
          if (now.change.address) update(session.token, { address: now.change.address });
          return;
        }
        people.learn([now.me]);
        update(session.token, now.change);
      },
      () => {}, // the session's name stays; the page's own requests show what failed
    );
    return () => {
      on = false;
    };
  }, [client]);
  const [friendRequests, setFriendRequests] = useState(0);
  const loadRequests = useCallback(() => {
    client.friendRequests().then(
      (r) => setFriendRequests(r.incoming.length),
      () => {}, // the badge waits for the next load; the Friends page shows the failure
    );
  }, [client]);
  const [updates, setUpdates] = useState<ReadonlyMap<string, Message>>(new Map());
  const applyUpdate = useCallback(
    (m: Message) => {
      setUpdates((u) => new Map(u).set(m.id, m));
      threadsOn.update(m);
    },
    [threadsOn],
  );
  // the live handler below is set up once per connection: it reaches these through a ref
  const handlers = useRef({ threadsOn, applyUpdate, people, loadRequests });
  handlers.current = { threadsOn, applyUpdate, people, loadRequests };
  // messages already handled by this page (a redelivery is not news: no count, no notification)
  const seen = useRef(new Set<string>());
  const visible = useVisible();
  const { reloadThreads, unreadTotal } = threads;

  useEffect(() => {
    const off = live.on((e) => {
      if (e.type === "status") {
        if (e.status === "unauthorized") expired();
        else setLiveStatus(e.status);
        if (e.status === "online") net.up(); // the server answers again: connection banners clear
        if (e.status === "offline") setOnline(new Set()); // unknown until the server announces them again on connect
      } else if (e.type === "presence") {
        handlers.current.people.learn([e.principal]);
        setOnline((s) => {
          const n = new Set(s);
          if (e.status === "online") n.add(e.principal.id);
          else n.delete(e.principal.id);
          return n;
        });
      } else if (e.type === "typing") {
        setTyping((m) => {
          const n = new Map(m);
          if (e.state === "start")
            n.set(e.thread_id, { name: e.from.display_name, until: Date.now() + (e.expires_in ?? 6) * 1000 });
          else n.delete(e.thread_id);
          return n;
        });
        if (e.state === "stop") return;
        setTimeout(
          () => setTyping((m) => new Map([...m].filter(([, v]) => v.until > Date.now()))),
          (e.expires_in ?? 6) * 1000 + 50,
        );
      } else if (e.type === "message") {
        setTyping((m) => {
          if (!m.has(e.message.thread_id)) return m;
          const n = new Map(m);
          n.delete(e.message.thread_id);
          return n;
        });
        setReceived((r) => (r.some((m) => m.id === e.message.id) ? r : [...r, e.message]));
        // a message already shown and acked once, handed out again: ack it again
        if (acked.current.has(e.message.id)) live.ack(e.message.id);
        const m = e.message;
        handlers.current.people.learn([m.from]);
        if (seen.current.has(m.id)) return;
        seen.current.add(m.id);
        const mine = m.from.id === session.me.id; // a group message of mine, echoed to my sockets
        handlers.current.threadsOn.message(m, mine ? null : openThread());
        if (!mine)
          notifyMessage(
            m,
            handlers.current.threadsOn.title(m.thread_id),
            () => (location.hash = `#/chat/t/${m.thread_id}`),
          );
      } else if (e.type === "message_update") {
        handlers.current.applyUpdate(e.message);
      } else if (e.type === "read") {
        handlers.current.threadsOn.read(e);
      } else if (e.type === "friend_request") {
        handlers.current.people.learn([e.from]);
        handlers.current.loadRequests();
        notifyFriendRequest(e.from, e.request.id, () => (location.hash = "#/friends"));
      }
    });
    live.start();
    return () => {
      off();
      live.stop();
    };
  }, [live, expired, session.me.id]);

  // the list on start, on every (re)connection and whenever the tab comes back into view
  useEffect(() => reloadThreads(0), [reloadThreads, visible, liveStatus === "online"]);
  useEffect(() => loadRequests(), [loadRequests, visible, liveStatus === "online"]);
  useEffect(() => {
    document.title = unreadTotal > 0 ? `(${unreadText(unreadTotal)}) Flock` : "Flock";
  }, [unreadTotal]);
  useEffect(
    () => () => {
      document.title = "Flock";
    },
    [],
  );

  // ack after display: this runs once the messages are rendered (the announcement below and the open chat)
  useEffect(() => {
    for (const m of received) {
      if (!acked.current.has(m.id) && live.ack(m.id)) acked.current.add(m.id);
    }
  }, [received, live, liveStatus]);

  useEffect(() => {
    if (!session.expires_at) return;
    const ms = Date.parse(session.expires_at) - Date.now();
    const t = setTimeout(expired, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    return () => clearTimeout(t);
  }, [session, expired]);

  // every conversation's peer is a name to know
  const { threads: list } = threads;
  useEffect(() => {
    if (list) people.learn(list.flatMap((t) => (t.peer ? [t.peer] : [])));
  }, [list]);

  const state: AppState = {
    session,
    updateSession,
    client,
    live,
    online,
    typing,
    received,
    liveStatus,
    fail,
    updates,
    applyUpdate,
    people,
    safety,
    friendRequests,
    setFriendRequests,
    ...threads,
  };
  const [page = "feed", ...rest] = hash.replace(/^#\/?/, "").split("/");
  const last = received[received.length - 1];

  return (
    <AppContext.Provider value={state}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Flock</span>
        <nav aria-label="Main">
          {[...PAGES, ...(safety.moderator ? ([["moderation", "Moderation"]] as const) : [])].map(([id, label]) => (
            <a key={id} href={`#/${id}`} aria-current={page === id ? "page" : undefined}>
              {label}
              {id === "chat" && unreadTotal > 0 && (
                <>
                  {" "}
                  <Unread n={unreadTotal} total />
                </>
              )}
              {id === "friends" && friendRequests > 0 && (
                <>
                  {" "}
                  <span class="badge unread" data-requests={friendRequests}>
                    {friendRequests > 99 ? "99+" : friendRequests}
                    <span class="sr-only"> {friendRequests === 1 ? "request" : "requests"}</span>
                  </span>
                </>
              )}
            </a>
          ))}
        </nav>
        <span class="me">
          <span
            class={`live ${liveStatus}`}
            role="status"
            aria-label={`connection ${liveStatus}`}
            data-live={liveStatus}
          >
            {liveStatus === "online" ? "live" : liveStatus}
          </span>
          <span title={session.me.id}>{session.me.display_name}</span>
          <button type="button" onClick={() => signOut(null)}>
            Sign out
          </button>
        </span>
      </header>
      <p class="sr-only" aria-live="polite">
        {last ? `New message from ${last.from.display_name}` : ""}
      </p>
      <main id="main" tabIndex={-1}>
        {page === "friends" ? (
          <Friends />
        ) : page === "chat" ? (
          <Chat route={rest} />
        ) : page === "agents" ? (
          <Agents />
        ) : page === "payments" ? (
          <Payments />
        ) : page === "profile" ? (
          <Profile />
        ) : page === "moderation" ? (
          <Moderation />
        ) : page === "p" && rest[0] ? (
          <PersonPage id={decodeURIComponent(rest[0])} name={decodeURIComponent(rest[1] ?? "")} />
        ) : page === "feed" || page === "" ? (
          <Feed />
        ) : (
          <NotFound page={page} />
        )}
      </main>
    </AppContext.Provider>
  );
}
