import { decode, encode } from "@msgpack/msgpack";
import t, { type Test as Tap } from "tap";
import { createLogger } from "../runtime/log.ts";
import { WsSession, HIGH_WATER, MAX_BUFFER, type SessionDeps, type Socket } from "../runtime/ws/session.ts";
import { jsonCodec, msgpackCodec } from "../runtime/ws/codec.ts";
import { RecentFrames } from "../runtime/messaging/channels.ts";
import { groupStream, inboxStream, isGroupStream } from "../runtime/messaging/stream-id.ts";
import { onClientFrame } from "../handlers/ws.ts";
import { WS_CLOSE } from "../schema/ws.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode, type TestNode } from "./helpers/node.ts";
import { ack, befriend, Client, createGroup, pending, postToGroup, sendOk } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";
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
        t.same(ready, {
          type: "ready",
          principal: { id: b.id, display_name: "Bo", avatar_url: null },
          protocol: encoding,
          heartbeat_seconds: 30,
        });
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

      /** Ada, Bo and Di, with Bo on a socket that has delivered Ada's first message and takes his inbox live. */
      const caughtUp = async (t: Tap) => {
        const a = await registerAgent(base, "Ada");
        const b = await registerAgent(base, "Bo");
        const d = await registerAgent(base, "Di");
        const first = await sendOk(base, a, b.id, "first");
        const c = await open(b.token);
        t.teardown(() => c.close());
        await c.nextOfType("ready");
        t.equal((await c.nextOfType("message")).message.id, first.id, "caught up on the inbox");
        await until(() => node.svc.hub.streams.channels.published(inboxStream(b.id)) === 1); // ... and taking it live from there
        return { a, b, d, first, c };
      };
      /**
       * Counts the node's reads from Postgres of `who`'s streams (`.n`; `.inbox`: those that include the inbox) until
       * the test ends: catch-ups and long polls read through StreamReads.backlog. Every read still happens.
       */
      const countReads = (t: Tap, who: string[]) => {
        const streams = node.svc.hub.streams.reads;
        const backlog = streams.backlog.bind(streams);
        const seen = { n: 0, inbox: 0 };
        streams.backlog = (member, stream, limit, after) => {
          if (who.includes(member)) {
            seen.n++;
            if (stream === null || !isGroupStream(stream)) seen.inbox++;
          }
          return backlog(member, stream, limit, after);
        };
        t.teardown(() => {
          streams.backlog = backlog;
        });
        return seen;
      };

      t.test(
        "a connection that has caught up takes new messages live from its inbox's topic, without reading Postgres",
        async (t) => {
          const { a, b, d, first, c } = await caughtUp(t);
          const reads = countReads(t, [b.id, d.id]);
          const live: string[] = [];
          for (let i = 0; i < 4; i++) {
            const m = await sendOk(base, a, b.id, `live ${i}`);
            live.push(m.id);
            t.same((await c.nextOfType("message")).message, { ...m, delivery_count: 1 });
          }
          t.equal(node.svc.hub.streams.channels.published(inboxStream(b.id)), 5, "published in the inbox's numbers");
          const g = await call(base, "POST", "/v1/groups", {
            token: a.token,
            json: { name: "g", members: [b.id, d.id] },
          });
          const sent = await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
            token: a.token,
            json: { body: "all" },
          });
          t.equal(sent.status, 201);
          const inGroup = (await c.nextOfType("message")).message;
          t.same(
            [inGroup.id, inGroup.delivery_count],
            [sent.body.id, 1],
            "a group message comes too (by its group's topic)",
          );
          t.equal(reads.inbox, 0, "no read of the inbox for any of them");
          t.same(
            (await pending(base, b)).map((m) => [m.id, m.delivery_count]),
            [first.id, ...live, sent.body.id].map((id) => [id, 2]),
            "each is unacknowledged, and counted as delivered (its member had a socket taking its stream live)",
          );
          t.ok(reads.inbox > 0, "(the long poll read)");

          // a second connection of the same principal catches up, then both take the inbox's one publish
          const c2 = await open(b.token);
          t.teardown(() => c2.close());
          await c2.nextOfType("ready");
          const again: string[] = [];
          for (let i = 0; i < 6; i++) again.push((await c2.nextOfType("message")).message.id);
          t.same(
            again.sort(),
            [first.id, ...live, sent.body.id].sort(),
            "the second connection catches up on everything unacknowledged",
          );
          reads.n = 0;
          reads.inbox = 0;
          const both = await sendOk(base, a, b.id, "to both");
          t.same((await c.nextOfType("message")).message, { ...both, delivery_count: 1 });
          t.same((await c2.nextOfType("message")).message, { ...both, delivery_count: 1 });
          t.equal(reads.n, 0, "two connections: no read for either");
          t.equal(c.frames.filter((f) => f.type === "message").length, 7, "nothing written twice to the first");
          t.equal(c2.frames.filter((f) => f.type === "message").length, 7, "nor to the second");
        },
      );

      t.test("direct sends from several senders reach a live connection once each, in the inbox's order", async (t) => {
        const { a, b, c } = await caughtUp(t);
        const senders = [
          a,
          await registerAgent(base, "Eve"),
          await registerAgent(base, "Fay"),
          await registerAgent(base, "Gus"),
        ];
        const reads = countReads(t, [b.id]);
        // sent together (four senders, within the per-second limit): they commit in one or a few statements
        const sends = await Promise.all(
          Array.from({ length: 16 }, (_, i) => sendOk(base, senders[i % 4]!, b.id, `m${i}`)),
        );
        const got: { id: string; delivery_count: number }[] = [];
        for (let i = 0; i < 16; i++) got.push((await c.nextOfType("message")).message);
        t.same(got.map((m) => m.id).sort(), sends.map((m) => m.id as string).sort(), "every message, once");
        t.same(
          got.map((m) => m.delivery_count),
          Array(16).fill(1),
          "each a first delivery",
        );
        const order = await node.svc.sql<
          { id: bigint; seq: string }[]
        >`select id, seq from messages where recipient = ${b.id} order by seq`;
        t.same(
          order.map((r) => Number(r.seq)),
          Array.from({ length: 17 }, (_, i) => i + 1),
          "numbered in the inbox without a hole",
        );
        t.same(
          got.map((m) => m.id),
          order.slice(1).map((r) => `msg_${r.id}`),
          "delivered in the inbox's order (its numbers)",
        );
        t.equal(reads.n, 0, "no read from Postgres");
        t.equal(node.svc.hub.streams.channels.published(inboxStream(b.id)), 17);
        t.equal(c.frames.filter((f) => f.type === "message").length, 17, "nothing written twice");
        // a cumulative ack of the last one takes them all, as it may: the socket got each of them, in order
        c.send({ type: "ack", id: got.at(-1)!.id, through: true, ref: "all" });
        t.same(await c.nextOfType("ack"), { type: "ack", id: got.at(-1)!.id, ref: "all" });
        t.same(await pending(base, b), [], "nothing left");
      });

      t.test(
        "group sends from several senders reach a live connection once each, in the group's order, not through the inbox",
        async (t) => {
          const { a, b, d, c } = await caughtUp(t);
          const senders = [
            a,
            await registerAgent(base, "Eve"),
            await registerAgent(base, "Fay"),
            await registerAgent(base, "Gus"),
          ];
          const members = [b.id, d.id, ...senders.slice(1).map((x) => x.id)];
          const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "busy", members } });
          const thread = BigInt(String(g.body.group.id).slice("group_".length));
          await until(() => node.svc.hub.streams.channels.published(groupStream(thread)) !== undefined); // the socket takes the group live
          const reads = countReads(t, [b.id]);
          // sent together (four senders, within the per-second limit): they commit in one or two statements
          const sends = await Promise.all(
            Array.from({ length: 16 }, (_, i) =>
              call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, {
                token: senders[i % 4]!.token,
                json: { body: `m${i}` },
              }),
            ),
          );
          t.same(
            sends.map((r) => r.status),
            Array(16).fill(201),
          );
          const got: { id: string; delivery_count: number }[] = [];
          for (let i = 0; i < 16; i++) got.push((await c.nextOfType("message")).message);
          t.same(got.map((m) => m.id).sort(), sends.map((r) => r.body.id as string).sort(), "every message, once");
          t.same(
            got.map((m) => m.delivery_count),
            Array(16).fill(1),
            "each a first delivery",
          );
          const order = await node.svc.sql<
            { id: bigint }[]
          >`select id from messages where thread_id = ${String(thread)} order by seq`;
          t.same(
            got.map((m) => m.id),
            order.map((r) => `msg_${r.id}`),
            "in the group's order (its numbers)",
          );
          const [inbox] = await node.svc.sql<
            { last_seq: string }[]
          >`select last_seq from inboxes where principal = ${b.id}`;
          t.equal(Number(inbox!.last_seq), 1, "nothing numbered in the member's inbox");
          t.equal(node.svc.hub.streams.channels.published(inboxStream(b.id)), 1, "nor published on it");
          t.equal(reads.n, 0, "no read from Postgres");
          t.equal(c.frames.filter((f) => f.type === "message").length, 17, "nothing written twice");
        },
      );

      t.test(
        "what a connection did not ack comes again on the next one, counted up; what it acked does not",
        async (t) => {
          const a = await registerAgent(base, "Ada");
          const b = await registerAgent(base, "Bo");
          const one = await sendOk(base, a, b.id, "one");
          const two = await sendOk(base, a, b.id, "two");
          const inboxLive = () => node.svc.hub.streams.channels.published(inboxStream(b.id)) !== undefined;
          const messages = (c: Client) =>
            c.frames.filter((f) => f.type === "message").map((f) => [f.message.id, f.message.delivery_count]);

          const c1 = await open(b.token);
          t.teardown(() => c1.close());
          await c1.nextOfType("ready");
          await c1.nextOfType("message");
          await c1.nextOfType("message");
          t.same(messages(c1), [
            [one.id, 1],
            [two.id, 1],
          ]);
          await until(inboxLive); // its catch-up recorded what it handed out (then took the inbox live)
          c1.send({ type: "ack", id: one.id, ref: "one" });
          await c1.nextOfType("ack");
          c1.close();
          await c1.waitClose();
          await until(() => !inboxLive()); // the node saw it go

          const c2 = await open(b.token);
          t.teardown(() => c2.close());
          await c2.nextOfType("ready");
          await c2.nextOfType("message");
          await until(inboxLive);
          const three = await sendOk(base, a, b.id, "three");
          await c2.nextOfType("message");
          t.same(
            messages(c2),
            [
              [two.id, 2],
              [three.id, 1],
            ],
            "the unacked one again, as a redelivery; the acked one not; a new one live, as a first",
          );
          c2.close();
          await c2.waitClose();
          await until(() => !inboxLive());

          const c3 = await open(b.token);
          t.teardown(() => c3.close());
          await c3.nextOfType("ready");
          await c3.nextOfType("message");
          await c3.nextOfType("message");
          t.same(
            messages(c3),
            [
              [two.id, 3],
              [three.id, 2],
            ],
            "each count goes up with each connection it went to, in the inbox's order",
          );
          await until(inboxLive); // its catch-up recorded what it handed out (then took the inbox live)
          t.same(
            (await pending(base, b)).map((m) => [m.id, m.delivery_count]),
            [
              [two.id, 4],
              [three.id, 3],
            ],
            "a long poll counts on from there",
          );
        },
      );

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
        t.same(
          await c.nextOfType("ack"),
          { type: "ack", id: two.id, ref: "with-ref" },
          "the first answer is the one asked for",
        );
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
          from: { id: a.id, display_name: "Typer", avatar_url: null },
          state: "start",
          expires_in: 10,
        });
        ca.send({ type: "typing", thread_id: m.thread_id, state: "stop" });
        t.same(await cb.nextOfType("typing"), {
          type: "typing",
          thread_id: m.thread_id,
          from: { id: a.id, display_name: "Typer", avatar_url: null },
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
          principal: { id: a.id, display_name: "Friend A", avatar_url: null },
          status: "online",
        });
        t.same(
          await ca.nextOfType("presence"),
          { type: "presence", principal: { id: b.id, display_name: "Friend B", avatar_url: null }, status: "online" },
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
          principal: { id: a.id, display_name: "Friend A", avatar_url: null },
          status: "offline",
        });
        t.notOk(
          cs.frames.some((f) => f.type === "presence"),
          "strangers see no presence",
        );
      });

      t.test(
        "a friendship made while connected is watched at once; one ended is announced offline and no longer",
        async (t) => {
          const a = await registerAgent(base, "New A");
          const b = await registerAgent(base, "New B");
          const c = await registerAgent(base, "New C");
          const ca = await open(a.token);
          const cb = await open(b.token);
          const cc = await open(c.token);
          t.teardown(() => [ca, cb, cc].forEach((x) => x.close()));
          await Promise.all([ca.nextOfType("ready"), cb.nextOfType("ready"), cc.nextOfType("ready")]);
          const presence = (who: Registered, name: string, status: string) => ({
            type: "presence",
            principal: { id: who.id, display_name: name, avatar_url: null },
            status,
          });
          const befriendLive = async (from: Registered, to: Registered) => {
            const req = await call(base, "POST", "/v1/friends/request", { token: from.token, json: { to: to.id } });
            t.equal(req.status, 201);
            t.equal(
              (await call(base, "POST", `/v1/friends/requests/${req.body.request.id}/accept`, { token: to.token }))
                .status,
              200,
            );
          };
          await befriendLive(b, a);
          t.same(
            await ca.nextOfType("presence"),
            presence(b, "New B", "online"),
            "the new friend, already online, is announced",
          );
          t.same(await cb.nextOfType("presence"), presence(a, "New A", "online"), "on both sides");

          t.equal((await call(base, "DELETE", `/v1/friends/${b.id}`, { token: a.token })).status, 204);
          t.same(
            await ca.nextOfType("presence"),
            presence(b, "New B", "offline"),
            "an ended friendship: the ex-friend shows offline",
          );
          t.same(await cb.nextOfType("presence"), presence(a, "New A", "offline"), "on both sides");

          // B going away is not announced to A any more; C, a friend made after, is (the same channel, in order)
          await befriendLive(c, a);
          t.same(await ca.nextOfType("presence"), presence(c, "New C", "online"));
          cb.close();
          await cb.waitClose();
          cc.close();
          t.same(
            await ca.nextOfType("presence"),
            presence(c, "New C", "offline"),
            "a friend made while connected is watched",
          );
          t.equal(
            ca.frames.filter((f) => f.type === "presence" && f.principal.id === b.id && f.status === "offline").length,
            1,
            "the ex-friend is not (only the unfriending's offline)",
          );

          // a request crossing one the other side sent makes them friends at once: announced as well
          const cb2 = await open(b.token);
          t.teardown(() => cb2.close());
          await cb2.nextOfType("ready");
          t.equal(
            (await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } })).status,
            201,
          );
          const both = await call(base, "POST", "/v1/friends/request", { token: b.token, json: { to: a.id } });
          t.equal(both.body.request.status, "accepted");
          t.same(await ca.nextOfType("presence"), presence(b, "New B", "online"));
          t.same(await cb2.nextOfType("presence"), presence(a, "New A", "online"));
        },
      );

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
 * A session of a running node over a fake socket (everything else real: the node's hub, presence and frame handler),
 * so a test can say how many bytes the socket holds: each message frame written adds `perFrame` to what it reports
 * buffered (`state`). What it was sent (as passed, and decoded), the topics it subscribed to, how it was ended.
 * `close` is what uWS's close handler does; the test's end does it too.
 */
async function fakeSocketSession(t: Tap, node: TestNode, who: Registered, perFrame = 0) {
  const state = { buffered: 0, perFrame };
  const raw: (string | Uint8Array)[] = [];
  const frames: any[] = [];
  const topics = new Set<string>();
  const ended: number[] = [];
  const socket: Socket = {
    send: (data) => {
      raw.push(data);
      const frame = JSON.parse(Buffer.from(data).toString("utf8"));
      frames.push(frame);
      if (frame.type === "message") state.buffered += state.perFrame;
      return 1;
    },
    getBufferedAmount: () => state.buffered,
    end: (code) => ended.push(code ?? 0),
    cork: (cb) => cb(),
    subscribe: (topic) => (topics.add(topic), true),
    unsubscribe: (topic) => topics.delete(topic),
  };
  const deps: SessionDeps = { svc: node.svc, hub: node.svc.hub, realtime: node.svc.realtime, onFrame: onClientFrame };
  const s = new WsSession(`fake-${who.id}`, socket, jsonCodec, deps, createLogger("silent"));
  s.token = who.token;
  s.open(await node.svc.auth.resolve(who.token));
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= (s.end(1000, "bye"), s.onClose()));
  t.teardown(close);
  const messages = (): { id: string; delivery_count: number }[] =>
    frames.filter((f) => f.type === "message").map((f) => f.message);
  return { s, raw, frames, topics, ended, state, messages, close };
}

/** Let the node run for a while (to see that something does not happen). */
const pause = (ms = 100) => new Promise((r) => setTimeout(r, ms));

t.test("a session over a fake socket on a running node", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "100" } });
  const base = node.url;
  /** `n` direct messages from a new agent to a new one, sent one after another; the ids, in the inbox's order. */
  const backlogOf = async (n: number) => {
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await sendOk(base, a, b.id, `m${i}`)).id as string);
    return { a, b, ids };
  };

  t.test(
    "a catch-up pauses while the socket is backed up and resumes once it drains; then it takes the inbox live",
    async (t) => {
      const { a, b, ids } = await backlogOf(150);
      // a page of 100 leaves twice HIGH_WATER buffered (still under MAX_BUFFER)
      const f = await fakeSocketSession(t, node, b, HIGH_WATER / 50);
      const topic = `${b.id}:json`;
      await until(() => f.messages().length === 100);
      t.equal(f.frames[0].type, "ready", "ready first");
      await pause();
      t.equal(f.messages().length, 100, "one page written; the next waits for the socket to drain");
      t.notOk(f.topics.has(topic), "not live yet");
      t.equal(node.svc.hub.streams.channels.published(inboxStream(b.id)), undefined);
      f.state.buffered = HIGH_WATER;
      f.s.onDrain();
      await pause();
      t.equal(f.messages().length, 100, "drained, but not below HIGH_WATER: still waiting");
      f.state.buffered = 0;
      f.state.perFrame = 0;
      f.s.onDrain();
      await until(() => f.topics.has(topic));
      t.same(
        f.messages().map((m) => [m.id, m.delivery_count]),
        ids.map((id) => [id, 1]),
        "then the rest: each once, in the inbox's order, as a first delivery",
      );
      t.equal(node.svc.hub.streams.channels.published(inboxStream(b.id)), 150, "live from the last one written");
      await sendOk(base, a, b.id, "live");
      await until(() => node.svc.hub.streams.channels.published(inboxStream(b.id)) === 151);
      t.equal(
        f.messages().length,
        150,
        "a live message goes out by the inbox's topic, not written to the socket again",
      );
      await f.close();
      t.equal(
        node.svc.hub.streams.channels.published(inboxStream(b.id)),
        undefined,
        "closed: the node no longer publishes the inbox",
      );
    },
  );

  t.test(
    "a socket that falls too far behind in a catch-up is closed with 4413; the next connection gets it all again",
    async (t) => {
      const { b, ids } = await backlogOf(150);
      const f = await fakeSocketSession(t, node, b, MAX_BUFFER / 32);
      await until(() => f.ended.length > 0);
      t.same(f.ended, [WS_CLOSE.slowConsumer]);
      t.equal(f.messages().length, 33, "closed at the frame that crossed MAX_BUFFER");
      await f.close();
      await pause();
      t.equal(f.messages().length, 33, "nothing written after");
      t.notOk(f.topics.has(`${b.id}:json`), "never taken live");

      const c = await Client.open(base, { token: b.token });
      t.teardown(() => c.close());
      await c.nextOfType("ready");
      for (let i = 0; i < 150; i++) await c.nextOfType("message");
      const got = c.frames.filter((x) => x.type === "message").map((x) => x.message);
      t.same(
        got.map((m) => m.id),
        ids,
        "every message, once, in order",
      );
      t.same(
        got.slice(0, 33).map((m) => m.delivery_count),
        Array(33).fill(2),
        "what went out before the close counts as delivered once",
      );
      t.same(
        got.slice(100).map((m) => m.delivery_count),
        Array(50).fill(1),
        "the page never read is a first delivery",
      );
    },
  );

  t.test("connections that take the same message write one shared frame", async (t) => {
    const a = await registerAgent(base, "Ada");
    const b = await registerAgent(base, "Bo");
    const d = await registerAgent(base, "Di");
    const g = await createGroup(base, a, [b, d]);
    const id = await postToGroup(base, a, g, "to both");
    const one = await fakeSocketSession(t, node, b);
    const two = await fakeSocketSession(t, node, d);
    await until(() => one.messages().length === 1 && two.messages().length === 1);
    t.same(
      [one.messages(), two.messages()].map((ms) => ms.map((m) => [m.id, m.delivery_count])),
      [[[id, 1]], [[id, 1]]],
    );
    const frameOf = (x: typeof one) => x.raw[x.frames.findIndex((f) => f.type === "message")];
    t.ok(frameOf(one) instanceof Uint8Array, "written as UTF-8 bytes");
    t.equal(frameOf(one), frameOf(two), "the same bytes, encoded once");
  });
});

t.test("frames are shared by message, delivery count and encoding, and bounded", (t) => {
  const frames = new RecentFrames(2);
  const a = frames.of("1", 1, `{"id":"1"}`);
  t.equal(frames.of("1", 1, `{"id":"1"}`), a, "the same message at the same count: the same frames");
  const again = frames.of("1", 2, `{"id":"1"}`);
  t.not(again, a, "another delivery count: other frames");
  t.equal(a.for(jsonCodec), a.for(jsonCodec), "encoded once per encoding");
  t.same(JSON.parse(Buffer.from(a.for(jsonCodec).data as Uint8Array).toString("utf8")), {
    type: "message",
    message: { id: "1", delivery_count: 1 },
  });
  t.same(decode(again.for(msgpackCodec).data as Uint8Array), {
    type: "message",
    message: { id: "1", delivery_count: 2 },
  });
  frames.of("3", 1, `{"id":"3"}`); // a third entry: the oldest goes
  t.not(frames.of("1", 1, `{"id":"1"}`), a, "the oldest was dropped, and is made again when asked for");
  t.end();
});
