// A principal that long polls (the SDK's default transport) is online to its friends' sockets as one that holds a
// socket is (runtime/messaging/poll-presence.ts): online at its first poll, offline once no poll has begun for the
// grace (set short here: the node's own is the longest wait and 15 s), and a socket closing leaves it online while it
// polls. On any node: the presence engine's entries are shared.
import t from "tap";
import { call, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend } from "./helpers/social.ts";
import { Client } from "./messaging-helpers.ts";

const GRACE_MS = 1500;
const one = await startTestNode(t, { pollPresenceGraceMs: GRACE_MS });
const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix, pollPresenceGraceMs: GRACE_MS });

/** `who` long polls `base` (short waits, one after another) until the returned function is called and its poll ends. */
function polling(base: string, who: Registered, wait = 0.2, answered = () => {}): () => Promise<void> {
  let on = true;
  const loop = (async () => {
    while (on) {
      const r = await call(base, "GET", `/v1/messages/pending?timeout=${wait}`, { token: who.token });
      if (r.status !== 200) throw new Error(`poll: ${r.status} ${r.text}`);
      answered();
    }
  })();
  return async () => {
    on = false;
    await loop;
  };
}

const frame = (who: Registered, name: string, status: "online" | "offline") => ({
  type: "presence",
  principal: { id: who.id, display_name: name, avatar_url: null },
  status,
});

/**
 * The statuses `c` heard of `who`, a repeat of the one before left out: a socket's join tells it of the friends online
 * after its ready, so a friend coming online just then may be told twice (runtime/ws/presence.ts `join`).
 */
const changes = (c: Client, who: Registered) =>
  c.frames
    .filter((f) => f.type === "presence" && f.principal.id === who.id)
    .map((f) => f.status as string)
    .filter((s, i, all) => s !== all[i - 1]);

/** Nothing `c` has heard since its frame `from` (so far) says `who` went offline. */
const noOffline = (c: Client, who: Registered, from = 0) =>
  !c.frames.slice(from).some((f) => f.type === "presence" && f.principal.id === who.id && f.status === "offline");

async function watcher(base: string, who: Registered): Promise<Client> {
  const c = await Client.open(base, { token: who.token });
  t.teardown(() => c.close());
  await c.nextOfType("ready");
  return c;
}

t.test("a friend's socket hears a poller come online, and go offline after the grace", async (t) => {
  const a = await registerAgent(one.url, "Poller A");
  const b = await registerAgent(one.url, "Watcher B");
  const s = await registerAgent(one.url, "Stranger");
  await befriend(one.url, a, b);
  const cb = await watcher(one.url, b);
  const cs = await watcher(one.url, s);

  let polls = 0;
  const stop = polling(one.url, a, 0.2, () => polls++);
  t.same(await cb.nextOfType("presence"), frame(a, "Poller A", "online"), "online at its first poll");
  // polls go on for longer than the grace: each one keeps it online
  await new Promise((r) => setTimeout(r, GRACE_MS * 2));
  t.ok(noOffline(cb, a), "online while it polls, past the grace");
  await stop();
  const stoppedAt = Date.now();
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Poller A", "offline"),
    "offline once it stopped polling",
  );
  t.ok(Date.now() - stoppedAt >= GRACE_MS - 300, "not before the grace");
  t.ok(polls >= 5, `it polled ${polls} times`);
  t.ok(cb.frames.filter((f) => f.type === "presence").length <= 3, "told of its polls at most twice: not once a poll");
  t.same(changes(cb, a), ["online", "offline"], "online, then offline");
  t.notOk(
    cs.frames.some((f) => f.type === "presence"),
    "a stranger hears nothing",
  );

  // a socket that opens and closes while it polls does not take it offline
  const heard = cb.frames.length;
  const stopAgain = polling(one.url, a);
  await cb.next((f) => f.type === "presence" && f.status === "online");
  const ca = await Client.open(one.url, { token: a.token });
  await ca.nextOfType("ready");
  ca.close();
  await ca.waitClose();
  await new Promise((r) => setTimeout(r, GRACE_MS));
  t.ok(noOffline(cb, a, heard), "still online while it polls, its socket closed");
  await stopAgain();
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Poller A", "offline"),
    "offline when the polls stop too",
  );
});

t.test("a poll held past the grace keeps its principal online", async (t) => {
  const a = await registerAgent(one.url, "Holder A");
  const b = await registerAgent(one.url, "Watcher B");
  await befriend(one.url, a, b);
  const cb = await watcher(one.url, b);
  const started = Date.now();
  const held = call(one.url, "GET", "/v1/messages/pending?timeout=3", { token: a.token });
  t.same(await cb.nextOfType("presence"), frame(a, "Holder A", "online"));
  t.equal((await held).status, 200);
  t.ok(Date.now() - started >= 2900, "the poll waited its 3 s, twice the grace");
  t.ok(noOffline(cb, a), "not offline while its poll was held");
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Holder A", "offline"),
  );
});

t.test("across nodes: online while it polls or holds a socket on any node", async (t) => {
  const a = await registerAgent(one.url, "Roamer A");
  const b = await registerAgent(one.url, "Watcher B");
  await befriend(one.url, a, b);
  const cb = await watcher(two.url, b);

  const stop = polling(one.url, a);
  t.same(await cb.nextOfType("presence"), frame(a, "Roamer A", "online"), "a poll on the other node");
  const ca = await Client.open(two.url, { token: a.token });
  await ca.nextOfType("ready");
  await stop();
  await new Promise((r) => setTimeout(r, GRACE_MS * 2));
  t.ok(noOffline(cb, a), "its polls stopped, its socket on the other node keeps it online");
  const stopAgain = polling(one.url, a);
  await new Promise((r) => setTimeout(r, 300)); // a poll or two begun
  ca.close();
  await ca.waitClose();
  await new Promise((r) => setTimeout(r, GRACE_MS));
  t.ok(noOffline(cb, a), "its socket closed, its polls on the other node keep it online");
  t.same(changes(cb, a), ["online"], "online all along");
  await stopAgain();
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Roamer A", "offline"),
    "offline once nothing of it is left on either node",
  );
});
