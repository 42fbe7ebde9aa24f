import { decode, encode } from "@msgpack/msgpack";
import t, { type Test as Tap } from "tap";
import { createLogger } from "../runtime/log.ts";
import { WsSession, MAX_BUFFER, type SessionDeps, type Socket } from "../runtime/ws/session.ts";
import { jsonCodec, msgpackCodec } from "../runtime/ws/codec.ts";
import { RecentFrames } from "../runtime/messaging/handout.ts";
import { WS_CLOSE } from "../schema/ws.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { ack, befriend, Client, pending, sendOk, until } from "./messaging-helpers.ts";
import type { Registered } from "./helpers/http.ts";

const PROTOCOL = { json: "flock.json", msgpack: "flock.msgpack" } as const;

for (const engine of ["redis", "memory"] as const) {
  for (const encoding of ["json", "msgpack"] as const) {
    t.test(`WebSocket channel, ${encoding} frames (${engine} engines)`, async (t) => {
      const node = await startTestNode(t, { engine });
      const base = node.url;
      const open = (token: string) => Client.open(base, { token, protocols: [PROTOCOL[encoding]], encoding });

      t.test("ready, then unacknowledged messages first, then new ones live; acks", async (t) => {
        const a = await registerAgent(base, "Ada");
        const b = await registerAgent(base, "Bo");
        const early = await sendOk(base, a, b.id, "sent while offline");
        const c = await open(b.token);
        t.teardown(() => c.close());
        t.equal(c.ws.protocol, PROTOCOL[encoding], "the encoding subprotocol is selected");
        const ready = await c.nextOfType("ready");
        t.same(ready, { type: "ready", principal: { id: b.id, display_name: "Bo" }, protocol: encoding, heartbeat_seconds: 30 });
        const first = await c.nextOfType("message");
        t.same(first.message, { ...early, delivery_count: 1 });
        const live = await sendOk(base, a, b.id, "live");
        t.same((await c.nextOfType("message")).message, { ...live, delivery_count: 1 });
        c.send({ type: "ack", id: early.id, ref: "r1" });
        t.same(await c.nextOfType("ack"), { type: "ack", id: early.id, ref: "r1" });
        c.send({ type: "ack", id: "msg_1", ref: "r2" });
        const err = await c.nextOfType("error");
        t.equal(err.error, "not_found");
        t.equal(err.ref, "r2");
        t.same(
          (await pending(base, b)).map((m) => m.id),
          [live.id],
          "the WebSocket ack is the same ack as over HTTP",
        );
        t.equal((await ack(base, b, live.id)).status, 204);
      });

      /** Ada, Bo and Di, with Bo on a socket that has delivered Ada's first message to him (so it has a cursor). */
      const caughtUp = async (t: Tap) => {
        const a = await registerAgent(base, "Ada");
        const b = await registerAgent(base, "Bo");
        const d = await registerAgent(base, "Di");
        const first = await sendOk(base, a, b.id, "first");
        const c = await open(b.token);
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        t.equal((await c.nextOfType("message")).message.id, first.id, "the connection has a cursor");
        return { a, b, d, first, c };
      };
      /** Counts the node's mailbox fetches for `who` (`.n`) until the test ends. */
      const countFetches = (t: Tap, who: string[]) => {
        const mb = node.svc.engines.mailboxes;
        const fetch = mb.fetch.bind(mb);
        const seen = { n: 0 };
        mb.fetch = (principal, limit, cursor) => {
          if (who.includes(principal)) seen.n++;
          return fetch(principal, limit, cursor);
        };
        t.teardown(() => {
          mb.fetch = fetch;
        });
        return seen;
      };

      t.test("a connection that has delivered everything takes new messages from the send itself, without a fetch", async (t) => {
        const { a, b, d, first, c } = await caughtUp(t);
        const mb = node.svc.engines.mailboxes;
        const fetches = countFetches(t, [b.id, d.id]);
        // subscribed after the node's own handler, so once this one has seen a wake-up, the node has handled it
        const woken = new Set<string>();
        const off = await mb.onWake((principal, id) => {
          if (principal === b.id && id !== null) woken.add(`msg_${id}`);
        });
        t.teardown(off);
        const live: string[] = [];
        for (let i = 0; i < 4; i++) {
          const m = await sendOk(base, a, b.id, `live ${i}`);
          live.push(m.id);
          t.same((await c.nextOfType("message")).message, { ...m, delivery_count: 1 });
        }
        const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "g", members: [b.id, d.id] } });
        const sent = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "all" } });
        t.equal(sent.status, 201);
        const inGroup = (await c.nextOfType("message")).message;
        t.same([inGroup.id, inGroup.delivery_count], [sent.body.id, 1], "a group message comes too (by its group's topic)");
        await until(() => live.every((id) => woken.has(id))); // the wake-ups came, and cost nothing
        t.equal(fetches.n, 0, "no fetch for any of them");
        t.same(
          (await pending(base, b)).map((m) => [m.id, m.delivery_count]),
          [first.id, ...live, sent.body.id].map((id) => [id, 2]),
          "each is unacknowledged, and counted as delivered (the group's: its member had a socket taking it live)",
        );
        t.ok(fetches.n > 0, "(the long poll fetched)");

        // a second connection of the same principal: both are served through wake-ups
        const c2 = await open(b.token);
        t.teardown(() => c2.close());
        await c2.nextOfType("ready");
        for (let i = 0; i < 6; i++) await c2.nextOfType("message");
        // its first pass ended with the fetch that brought these (fewer than a page)
        fetches.n = 0;
        const both = await sendOk(base, a, b.id, "to both");
        t.equal((await c.nextOfType("message")).message.id, both.id);
        t.equal((await c2.nextOfType("message")).message.id, both.id);
        t.equal(fetches.n, 2, "two connections: fetched by each");
      });

      t.test("group sends from several senders reach a live connection once each, in the group's order, with no mailbox", async (t) => {
        const { a, b, d, c } = await caughtUp(t);
        const senders = [a, await registerAgent(base, "Eve"), await registerAgent(base, "Fay"), await registerAgent(base, "Gus")];
        const members = [b.id, d.id, ...senders.slice(1).map((x) => x.id)];
        const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "busy", members } });
        const mb = node.svc.engines.mailboxes;
        const append = mb.append.bind(mb);
        const fetches = countFetches(t, [b.id]);
        let appended = 0;
        mb.append = (items) => {
          if (items.some((it) => it.principal === b.id)) appended++;
          return append(items);
        };
        t.teardown(() => {
          mb.append = append;
        });
        const thread = BigInt(String(g.body.group.id).slice("group_".length));
        await until(() => node.svc.hub.groups.channels.published(thread) !== undefined); // the socket takes the group live
        // sent together (four senders, within the per-second limit): they commit in one or two statements
        const sends = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: senders[i % 4]!.token, json: { body: `m${i}` } }),
          ),
        );
        t.same(sends.map((r) => r.status), Array(16).fill(201));
        const got: { id: string; delivery_count: number }[] = [];
        for (let i = 0; i < 16; i++) got.push((await c.nextOfType("message")).message);
        t.same(got.map((m) => m.id).sort(), sends.map((r) => r.body.id as string).sort(), "every message, once");
        t.same(got.map((m) => m.delivery_count), Array(16).fill(1), "each a first delivery");
        const order = await node.svc.sql<{ id: bigint }[]>`select id from messages where thread_id = ${String(thread)} order by seq`;
        t.same(got.map((m) => m.id), order.map((r) => `msg_${r.id}`), "in the group's order (its numbers)");
        t.equal(appended, 0, "nothing appended to a mailbox");
        t.equal(fetches.n, 0, "no fetch");
        t.equal(c.frames.filter((f) => f.type === "message").length, 17, "nothing written twice");
      });

      t.test("an ack without a ref is not answered; one with a ref is", async (t) => {
        const a = await registerAgent(base, "Ada");
        const b = await registerAgent(base, "Bo");
        const one = await sendOk(base, a, b.id, "one");
        const two = await sendOk(base, a, b.id, "two");
        const c = await open(b.token);
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        t.equal((await c.nextOfType("message")).message.id, one.id);
        t.equal((await c.nextOfType("message")).message.id, two.id);
        c.send({ type: "ack", id: one.id });
        c.send({ type: "ack", id: two.id, ref: "with-ref" });
        t.same(await c.nextOfType("ack"), { type: "ack", id: two.id, ref: "with-ref" }, "the first answer is the one asked for");
        t.same(await pending(base, b), [], "both acks landed");
      });

      t.test("typing start and stop between two clients of a thread", async (t) => {
        const a = await registerAgent(base, "Typer");
        const b = await registerAgent(base, "Reader");
        const x = await registerAgent(base, "Outsider");
        const m = await sendOk(base, a, b.id, "hi");
        const ca = await open(a.token);
        const cb = await open(b.token);
        const cx = await open(x.token);
        t.teardown(() => [ca, cb, cx].forEach((c) => c.close()));
        await Promise.all([ca.nextOfType("ready"), cb.nextOfType("ready"), cx.nextOfType("ready")]);
        ca.send({ type: "typing", thread_id: m.thread_id, state: "start" });
        t.same(await cb.nextOfType("typing"), {
          type: "typing",
          thread_id: m.thread_id,
          from: { id: a.id, display_name: "Typer" },
          state: "start",
          expires_in: 10,
        });
        ca.send({ type: "typing", thread_id: m.thread_id, state: "stop" });
        t.same(await cb.nextOfType("typing"), {
          type: "typing",
          thread_id: m.thread_id,
          from: { id: a.id, display_name: "Typer" },
          state: "stop",
        });
        cx.send({ type: "typing", thread_id: m.thread_id, state: "start" });
        t.equal((await cx.nextOfType("error")).error, "not_found", "not a member of the thread");
        // another typist (a's next start would come within 3 s of its last: see test/ws-hardening.test.ts)
        const y = await registerAgent(base, "Leaver");
        const m2 = await sendOk(base, y, b.id, "hi");
        const cy = await open(y.token);
        t.teardown(() => cy.close());
        await cy.nextOfType("ready");
        cy.send({ type: "typing", thread_id: m2.thread_id, state: "start" });
        await cb.next((f) => f.type === "typing" && f.state === "start" && f.from.id === y.id);
        cy.close();
        const stop = await cb.next((f) => f.type === "typing" && f.state === "stop" && f.from.id === y.id);
        t.equal(stop.thread_id, m2.thread_id, "a typist who disconnects stops typing");
        t.notOk(
          cx.frames.some((f) => f.type === "typing"),
          "outsiders see nothing",
        );
      });

      t.test("presence of friends: online on connect, offline when the last connection closes", async (t) => {
        const a = await registerAgent(base, "Friend A");
        const b = await registerAgent(base, "Friend B");
        const s = await registerAgent(base, "Stranger");
        await befriend(node.svc.sql, a.id, b.id);
        const cb = await open(b.token);
        const cs = await open(s.token);
        t.teardown(() => [cb, cs].forEach((c) => c.close()));
        await Promise.all([cb.nextOfType("ready"), cs.nextOfType("ready")]);
        const ca = await open(a.token);
        t.same(await cb.nextOfType("presence"), {
          type: "presence",
          principal: { id: a.id, display_name: "Friend A" },
          status: "online",
        });
        t.same(
          await ca.nextOfType("presence"),
          { type: "presence", principal: { id: b.id, display_name: "Friend B" }, status: "online" },
          "friends already online are announced after ready",
        );
        const ca2 = await open(a.token);
        await ca2.nextOfType("ready");
        ca.close();
        await ca.waitClose();
        ca2.send({ type: "ping", ref: "still here" });
        await ca2.nextOfType("pong");
        t.notOk(
          cb.frames.some((f) => f.type === "presence" && f.status === "offline"),
          "still online through a second connection",
        );
        ca2.close();
        t.same(await cb.next((f) => f.type === "presence" && f.status === "offline"), {
          type: "presence",
          principal: { id: a.id, display_name: "Friend A" },
          status: "offline",
        });
        t.notOk(
          cs.frames.some((f) => f.type === "presence"),
          "strangers see no presence",
        );
      });

      t.test("a friendship made while connected is watched at once; one ended is announced offline and no longer", async (t) => {
        const a = await registerAgent(base, "New A");
        const b = await registerAgent(base, "New B");
        const c = await registerAgent(base, "New C");
        const ca = await open(a.token);
        const cb = await open(b.token);
        const cc = await open(c.token);
        t.teardown(() => [ca, cb, cc].forEach((x) => x.close()));
        await Promise.all([ca.nextOfType("ready"), cb.nextOfType("ready"), cc.nextOfType("ready")]);
        const presence = (who: Registered, name: string, status: string) => ({ type: "presence", principal: { id: who.id, display_name: name }, status });
        const befriendLive = async (from: Registered, to: Registered) => {
          const req = await call(base, "POST", "/v1/friends/request", { token: from.token, json: { to: to.id } });
          t.equal(req.status, 201);
          t.equal((await call(base, "POST", `/v1/friends/requests/${req.body.request.id}/accept`, { token: to.token })).status, 200);
        };
        await befriendLive(b, a);
        t.same(await ca.nextOfType("presence"), presence(b, "New B", "online"), "the new friend, already online, is announced");
        t.same(await cb.nextOfType("presence"), presence(a, "New A", "online"), "on both sides");

        t.equal((await call(base, "DELETE", `/v1/friends/${b.id}`, { token: a.token })).status, 204);
        t.same(await ca.nextOfType("presence"), presence(b, "New B", "offline"), "an ended friendship: the ex-friend shows offline");
        t.same(await cb.nextOfType("presence"), presence(a, "New A", "offline"), "on both sides");

        // B going away is not announced to A any more; C, a friend made after, is (the same channel, in order)
        await befriendLive(c, a);
        t.same(await ca.nextOfType("presence"), presence(c, "New C", "online"));
        cb.close();
        await cb.waitClose();
        cc.close();
        t.same(await ca.nextOfType("presence"), presence(c, "New C", "offline"), "a friend made while connected is watched");
        t.equal(
          ca.frames.filter((f) => f.type === "presence" && f.principal.id === b.id && f.status === "offline").length,
          1,
          "the ex-friend is not (only the unfriending's offline)",
        );

        // a request crossing one the other side sent makes them friends at once: announced as well
        const cb2 = await open(b.token);
        t.teardown(() => cb2.close());
        await cb2.nextOfType("ready");
        t.equal((await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } })).status, 201);
        const both = await call(base, "POST", "/v1/friends/request", { token: b.token, json: { to: a.id } });
        t.equal(both.body.request.status, "accepted");
        t.same(await ca.nextOfType("presence"), presence(b, "New B", "online"));
        t.same(await cb2.nextOfType("presence"), presence(a, "New A", "online"));
      });

      t.test("ping, and bad frames get an error frame without closing", async (t) => {
        const a = await registerAgent(base, "a");
        const c = await open(a.token);
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        c.send({ type: "ping", ref: "p1" });
        t.same(await c.nextOfType("pong"), { type: "pong", ref: "p1" });
        c.ws.send(encoding === "json" ? "{not json" : Buffer.from([0xc1]));
        t.equal((await c.nextOfType("error")).error, "invalid_request");
        c.send({ type: "dance" });
        t.match((await c.nextOfType("error")).message, /invalid frame/);
        c.send({ type: "ack", ref: "r9" });
        const e = await c.nextOfType("error");
        t.equal(e.ref, "r9");
        t.match(e.message, /id/);
        c.send({ type: "typing", thread_id: "nope", state: "start" });
        t.equal((await c.nextOfType("error")).error, "not_found");
        c.send({ type: "ping" });
        t.same(await c.nextOfType("pong"), { type: "pong" }, "still open");
        t.equal(c.closed, null);
      });
    });
  }
}

t.test("WebSocket authentication", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const base = node.url;
  const a = await registerAgent(base, "Auth");

  t.test("first-frame auth", async (t) => {
    const c = await Client.open(base);
    t.teardown(() => c.close());
    c.send({ type: "auth", token: a.token });
    t.equal((await c.nextOfType("ready")).principal.id, a.id);
    c.send({ type: "auth", token: a.token });
    t.match((await c.nextOfType("error")).message, /already authenticated/);
  });

  t.test("anything but auth first closes with 4401", async (t) => {
    const c = await Client.open(base);
    c.send({ type: "ping" });
    t.equal((await c.nextOfType("error")).error, "unauthorized");
    t.equal((await c.waitClose()).code, WS_CLOSE.unauthorized);
  });

  t.test("a bad token in the auth frame closes with 4401", async (t) => {
    const c = await Client.open(base);
    c.send({ type: "auth", token: `am_${"x".repeat(43)}` });
    t.equal((await c.waitClose()).code, WS_CLOSE.unauthorized);
  });

  t.test("bearer subprotocol alone is selected; beside an encoding, the encoding is", async (t) => {
    const only = await Client.open(base, { protocols: [`bearer.${a.token}`] });
    t.teardown(() => only.close());
    t.equal(only.ws.protocol, `bearer.${a.token}`);
    t.equal((await only.nextOfType("ready")).protocol, "json");
    const both = await Client.open(base, { protocols: [`bearer.${a.token}`, "flock.msgpack"], encoding: "msgpack" });
    t.teardown(() => both.close());
    t.equal(both.ws.protocol, "flock.msgpack");
    t.equal((await both.nextOfType("ready")).protocol, "msgpack");
  });

  t.test("refused at the upgrade with a bad header or bearer token", async (t) => {
    await t.rejects(Client.open(base, { token: `am_${"y".repeat(43)}` }), /401/);
    await t.rejects(Client.open(base, { protocols: ["bearer.nope"] }), /401/);
  });

  t.test("a msgpack client gets binary MessagePack frames", async (t) => {
    const c = await Client.open(base, { token: a.token, protocols: ["flock.msgpack"], encoding: "msgpack" });
    t.teardown(() => c.close());
    await c.nextOfType("ready");
    c.ws.send(encode({ type: "ping", ref: "bin" }));
    t.same(await c.nextOfType("pong"), { type: "pong", ref: "bin" });
    t.same(c.binary, [true, true]);
  });
});

t.test("a slow consumer is closed with 4413 once its buffer crosses the bound", async (t) => {
  let buffered = 0;
  const ended: number[] = [];
  const sent: unknown[] = [];
  const socket: Socket = {
    send: (data) => {
      sent.push(data);
      return buffered > 2 * MAX_BUFFER ? 2 : 1;
    },
    getBufferedAmount: () => buffered,
    end: (code) => ended.push(code ?? 0),
    cork: (cb) => cb(),
    subscribe: () => true,
    unsubscribe: () => true,
  };
  const s = new WsSession("c1", socket, jsonCodec, {} as SessionDeps, createLogger("silent"));
  t.equal(s.send({ type: "pong" }), true);
  buffered = MAX_BUFFER - 10;
  t.equal(s.send({ type: "pong" }), true, "within the bound");
  buffered = MAX_BUFFER + 1;
  t.equal(s.send({ type: "pong" }), false);
  t.same(ended, [WS_CLOSE.slowConsumer]);
  t.equal(s.send({ type: "pong" }), false, "nothing more is sent");
  t.equal(sent.length, 3);
});

/**
 * A session over a fake socket and a hub whose fetches the test answers one by one (each entry's cursor is
 * `c<id>`): what it writes, the fetches it asks for, and how many bytes the socket reports buffered.
 */
function scriptedSession(frames = new RecentFrames()) {
  const sent: string[] = [];
  /** What was passed to the socket, as it was passed. */
  const raw: unknown[] = [];
  const socket = { buffered: 0 };
  const fake: Socket = {
    send: (data) => {
      raw.push(data);
      sent.push(String(data));
      return 1;
    },
    getBufferedAmount: () => socket.buffered,
    end: () => {},
    cork: (cb) => cb(),
    subscribe: () => true,
    unsubscribe: () => true,
  };
  const fetches: { cursor: string | null; answer: (ids: string[]) => void }[] = [];
  const hub = {
    frames,
    fetch: (_p: string, _limit: number, cursor: string | null) =>
      new Promise((resolve) => {
        fetches.push({ cursor, answer: (ids) => resolve(ids.map(entry)) });
      }),
  };
  const s = new WsSession("c1", fake, jsonCodec, { hub } as unknown as SessionDeps, createLogger("silent"));
  s.principal = { id: "1", kind: "agent", displayName: "A" } as WsSession["principal"];
  const delivered = () => sent.map((f) => (JSON.parse(f) as { message: { id: string } }).message.id);
  return { s, sent, raw, fetches, socket, delivered };
}

const entry = (id: string) => ({ id, payload: `{"id":"${id}"}`, deliveryCount: 1, cursor: `c${id}` });
/** Let the promise continuations run (the scripted fetches answer synchronously). */
const settle = () => new Promise((r) => setImmediate(r));

t.test("a wake-up during a fetch costs another fetch only when that fetch did not bring its message", async (t) => {
  const { s, sent, fetches } = scriptedSession();

  const first = s.pump();
  s.wake("7"); // arrives while the fetch is out
  fetches[0]!.answer(["7"]); // ... and that fetch brought message 7
  await first;
  t.equal(fetches.length, 1, "no second fetch: the message came with the first");

  const second = (s.wake("8"), settle());
  await second;
  t.equal(fetches.length, 2, "a wake-up while idle fetches");
  s.wake("9"); // the fetch under way was sent before message 9 arrived
  fetches[1]!.answer(["8"]);
  await settle();
  t.equal(fetches.length, 3, "message 9 was not among the entries: fetch again");
  t.equal(fetches[2]!.cursor, "c8", "after what was delivered");
  s.wake(null); // the mailbox changed as a whole
  fetches[2]!.answer(["9"]);
  await settle();
  t.equal(fetches.length, 4, "a wake-up naming no message always fetches again");
  fetches[3]!.answer([]);
  await settle();
  t.equal(fetches.length, 4);
  t.same(
    sent.map((f) => (JSON.parse(f) as { message: { id: string } }).message.id),
    ["7", "8", "9"],
  );
});

t.test("a hand-out: taken when handed out, else fetched; no pass runs while offers are out; offers chain", async (t) => {
  const { s, fetches, socket, delivered } = scriptedSession();

  t.equal(s.offer("1"), null, "nothing delivered yet: no cursor to hand out after");
  const first = s.pump();
  t.equal(s.offer("1"), null, "not while a pass runs");
  fetches[0]!.answer(["1"]);
  await first;
  t.same(s.offer("2"), { after: "c1" }, "caught up: offered after its cursor");
  t.same(s.offer("3"), { afterHanded: "2" }, "a second send while the first's append is out: chained on it");
  s.wake("2"); // the wake-ups of the messages offered come before the appends' answers: nothing to do
  s.wake("3");
  s.wake("4"); // message 4 was not offered: its pass waits for the answers
  await settle();
  t.equal(fetches.length, 1, "no fetch while offers are out");
  s.settle("2", entry("2"));
  t.same(delivered(), ["1", "2"], "handed out: written at once");
  await settle();
  t.equal(fetches.length, 1, "the held pass waits for the last offer");
  s.settle("3", entry("3"));
  t.same(delivered(), ["1", "2", "3"], "the chained entry: written after the one before it");
  await settle();
  t.equal(fetches.length, 2, "then the held pass runs");
  t.equal(fetches[1]!.cursor, "c3", "after the last handed-out entry");
  fetches[1]!.answer(["4"]);
  await settle();

  t.same(s.offer("5"), { after: "c4" });
  s.settle("5", entry("5")); // answered before its wake-up ...
  s.wake("5"); // ... which then costs nothing
  await settle();
  t.equal(fetches.length, 2, "no fetch for 5");

  t.same(s.offer("6"), { after: "c5" });
  s.settle("6", null); // not handed out (something lay after the cursor, or it was not stored): fetched
  await settle();
  t.equal(fetches.length, 3);
  t.equal(fetches[2]!.cursor, "c5");
  fetches[2]!.answer(["6"]);
  await settle();
  s.wake("6");
  await settle();
  t.equal(fetches.length, 3, "its late wake-up is ignored");

  t.same(s.offer("7"), { after: "c6" });
  t.same(s.offer("8"), { afterHanded: "7" });
  s.settle("7", null); // the chain breaks here ...
  s.settle("8", entry("8")); // ... so a later entry is not written before the earlier one
  t.same(delivered(), ["1", "2", "3", "4", "5", "6"], "8 is not written before 7");
  await settle();
  t.equal(fetches.length, 4, "both fetched, in order");
  t.equal(fetches[3]!.cursor, "c6");
  fetches[3]!.answer(["7", "8"]);
  await settle();

  const chain = Array.from({ length: 17 }, (_, i) => s.offer(String(100 + i)));
  t.same(chain.slice(0, 16).map((o) => o === null), Array(16).fill(false), "up to 16 offers chain");
  t.equal(chain[16], null, "past that, a message is fetched");
  for (let i = 0; i < 16; i++) s.settle(String(100 + i), null);
  await settle();
  fetches[4]!.answer([]);
  await settle();

  socket.buffered = 300 * 1024;
  t.equal(s.offer("9"), null, "not while the socket is backed up");
  socket.buffered = 0;
  t.same(s.offer("9"), { after: "c8" });
  s.end(1000, "bye");
  s.settle("9", entry("9"));
  await settle();
  t.equal(fetches.length, 5, "closed meanwhile: nothing written, nothing fetched");
  t.same(delivered(), ["1", "2", "3", "4", "5", "6", "7", "8"], "each message once, in order");
});

t.test("a chain's answers are taken in the order of its offers; after a break, no offer until the pass", async (t) => {
  const { s, fetches, socket, delivered } = scriptedSession();
  const first = s.pump();
  fetches[0]!.answer(["1"]);
  await first;

  t.same(s.offer("2"), { after: "c1" });
  t.same(s.offer("3"), { afterHanded: "2" });
  s.settle("3", entry("3")); // answered first (a cluster's appends can answer out of order) ...
  t.same(delivered(), ["1"], "... but not written before 2");
  s.settle("2", entry("2"));
  t.same(delivered(), ["1", "2", "3"], "both, in the order offered");
  await settle();
  t.equal(fetches.length, 1, "no fetch");

  t.same(s.offer("4"), { after: "c3" });
  t.same(s.offer("5"), { afterHanded: "4" });
  s.settle("4", null); // the chain breaks at its head
  t.equal(s.offer("6"), null, "no more offers: the pass must run once the chain drains");
  s.wake("6");
  s.settle("5", entry("5"));
  await settle();
  t.equal(fetches.length, 2, "one pass, once the last answer is in");
  t.equal(fetches[1]!.cursor, "c3");
  fetches[1]!.answer(["4", "5", "6"]);
  await settle();
  t.same(delivered(), ["1", "2", "3", "4", "5", "6"]);

  t.same(s.offer("7"), { after: "c6" }, "offers again after the pass");
  t.same(s.offer("8"), { afterHanded: "7" });
  s.settle("7", entry("7"));
  socket.buffered = 300 * 1024; // the socket backs up between two hand-outs of a chain
  s.settle("8", entry("8"));
  t.same(delivered(), ["1", "2", "3", "4", "5", "6", "7"], "8 is not written onto a backed-up socket");
  await settle();
  t.equal(fetches.length, 2, "the pass waits for the drain");
  socket.buffered = 0;
  s.onDrain();
  await settle();
  t.equal(fetches[2]!.cursor, "c7");
  fetches[2]!.answer(["8"]);
  await settle();
  t.same(delivered(), ["1", "2", "3", "4", "5", "6", "7", "8"], "each once, in order");
});

t.test("frames are shared by message, delivery count and encoding, and bounded", (t) => {
  const frames = new RecentFrames(2);
  const a = frames.of("1", 1, `{"id":"1"}`);
  t.equal(frames.of("1", 1, `{"id":"1"}`), a, "the same message at the same count: the same frames");
  const again = frames.of("1", 2, `{"id":"1"}`);
  t.not(again, a, "another delivery count: other frames");
  t.equal(a.for(jsonCodec), a.for(jsonCodec), "encoded once per encoding");
  t.same(JSON.parse(Buffer.from(a.for(jsonCodec).data as Uint8Array).toString("utf8")), { type: "message", message: { id: "1", delivery_count: 1 } });
  t.same(decode(again.for(msgpackCodec).data as Uint8Array), { type: "message", message: { id: "1", delivery_count: 2 } });
  frames.of("3", 1, `{"id":"3"}`); // a third entry: the oldest goes
  t.not(frames.of("1", 1, `{"id":"1"}`), a, "the oldest was dropped, and is made again when asked for");
  t.end();
});

t.test("connections that take the same message, fetched or handed out, write one shared frame", async (t) => {
  const frames = new RecentFrames();
  const one = scriptedSession(frames);
  const two = scriptedSession(frames);
  const pumps = [one.s.pump(), two.s.pump()];
  one.fetches[0]!.answer(["7"]);
  two.fetches[0]!.answer(["7"]);
  await Promise.all(pumps);
  t.same([one.delivered(), two.delivered()], [["7"], ["7"]]);
  t.equal(one.raw[0], two.raw[0], "the same bytes, encoded once");
  t.ok(one.raw[0] instanceof Uint8Array, "as UTF-8 bytes");

  t.ok(one.s.offer("8") && two.s.offer("8"));
  one.s.settle("8", entry("8"));
  two.s.settle("8", entry("8"));
  t.same([one.delivered(), two.delivered()], [["7", "8"], ["7", "8"]]);
  t.ok(one.raw[1] instanceof Uint8Array, "a send's hand-outs: UTF-8 bytes ...");
  t.equal(one.raw[1], two.raw[1], "... the same ones, encoded once");
});
