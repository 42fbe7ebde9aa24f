// A principal that long polls (the SDK's default transport) is online to its friends' sockets as one that holds a
// socket is (runtime/messaging/poll-presence.ts), through a real node: online at its first poll, told once however
// many polls, offline once no poll has come for the grace (set short here: the node's own is the longest wait and
// 15 s), a poll held past the grace keeping it; on another node's socket too. The rules by the clock (renewal, expiry,
// another entry keeping it online) are test/unit/poll-presence.test.ts's, on a clock moved by hand.
import t from "tap";
import { call, ok, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend } from "./helpers/social.ts";
import { Client } from "./messaging-helpers.ts";

const GRACE_MS = 1500;
const one = await startTestNode(t, { pollPresenceGraceMs: GRACE_MS });
const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix, pollPresenceGraceMs: GRACE_MS });

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

t.test("a friend's socket hears a poller come online once, and go offline after the grace", async (t) => {
  const a = await registerAgent(one.url, "Poller A");
  const b = await registerAgent(one.url, "Watcher B");
  const s = await registerAgent(one.url, "Stranger");
  await befriend(one.url, a, b);
  const cb = await watcher(one.url, b);
  const cs = await watcher(one.url, s);

  for (let i = 0; i < 10; i++)
    await ok(call(one.url, "GET", "/v1/messages/pending?timeout=0", { token: a.token }), 200);
  t.same(await cb.nextOfType("presence"), frame(a, "Poller A", "online"), "online at its first poll");
  const stoppedAt = Date.now();
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Poller A", "offline"),
    "offline once it stopped polling",
  );
  t.ok(Date.now() - stoppedAt >= GRACE_MS / 2, "not at once: after its grace");
  t.same(changes(cb, a), ["online", "offline"], "ten polls: told online once, then offline");
  t.notOk(
    cs.frames.some((f) => f.type === "presence"),
    "a stranger hears nothing",
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

t.test("a friend's socket on another node hears it too", async (t) => {
  const a = await registerAgent(one.url, "Roamer A");
  const b = await registerAgent(one.url, "Watcher B");
  await befriend(one.url, a, b);
  const cb = await watcher(two.url, b);
  await ok(call(one.url, "GET", "/v1/messages/pending?timeout=0", { token: a.token }), 200);
  t.same(await cb.nextOfType("presence"), frame(a, "Roamer A", "online"), "a poll on the other node");
  t.same(
    await cb.next((f) => f.type === "presence" && f.status === "offline", GRACE_MS * 4),
    frame(a, "Roamer A", "offline"),
  );
});
