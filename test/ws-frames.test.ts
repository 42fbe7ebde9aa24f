// Lean message frames (issue 52): a client offering `flock.json.lean` or `flock.msgpack.lean` gets message frames
// without nulls and without what it knows (schema/ws.ts, LeanMessage), exactly; a client not asking gets today's
// frames byte for byte; the SDK asks for lean frames and yields the same Message its users got from full ones.
import { decode } from "@msgpack/msgpack";
import t from "tap";
import { Flock } from "../client/index.ts";
import type { Message } from "../client/types.ts";
import { fullMessage } from "../client/ws.ts";
import { jsonLeanCodec } from "../runtime/ws/codec.ts";
import { LeanMessageFrame, WS_PROTOCOL } from "../schema/ws.ts";
import { call, registerAgent, type Registered } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client, createGroup, postToGroup, sendOk } from "./messaging-helpers.ts";

type Obj = Record<string, unknown>;

t.test("lean and full message frames over a real socket", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const base = node.url;
  const ada = await registerAgent(base, "Ada");
  const bo = await registerAgent(base, "Bo");
  const di = await registerAgent(base, "Di");
  const g = await createGroup(base, ada, [bo, di]);

  /** Bo's socket offering `protocols`; its raw frames kept as they came (text, or the decoded MessagePack). */
  const open = async (who: Registered, protocols: string[]) => {
    const encoding = protocols[0]?.startsWith("flock.msgpack") ? "msgpack" : "json";
    const c = await Client.open(base, { token: who.token, protocols, encoding });
    const raw: (string | Uint8Array)[] = [];
    c.ws.on("message", (data: Buffer, binary: boolean) => raw.push(binary ? new Uint8Array(data) : data.toString()));
    t.teardown(() => c.close());
    return { c, raw };
  };
  /** The raw text of the first message frame of message `id`. */
  const rawOf = (raw: (string | Uint8Array)[], id: string) =>
    raw.find((r) => typeof r === "string" && r.includes(`"id":"${id}"`) && r.startsWith('{"type":"message"'));

  // sent while Bo is offline, so each socket gets them in its catch-up; and one live
  const direct = (await sendOk(base, ada, bo.id, "direct one")) as Message;
  const postGroup = async (body: Obj) => {
    const r = await call(base, "POST", `/v1/groups/${g}/messages`, { token: ada.token, json: body });
    t.equal(r.status, 201);
    return r.body as Message;
  };
  const group = await postGroup({ body: "to the group" });
  const groupId = group.id;
  const replied = await postGroup({ body: "a reply", reply_to: groupId });
  t.ok(replied.reply_to, "a reply");
  const thread = group.thread_id;

  t.test("a lean JSON client: the exact frames", async (t) => {
    const { c, raw } = await open(bo, [WS_PROTOCOL.jsonLean, WS_PROTOCOL.json]);
    t.equal(c.ws.protocol, "flock.json.lean", "the lean subprotocol is selected");
    t.same(await c.nextOfType("ready"), {
      type: "ready",
      principal: { id: bo.id, display_name: "Bo", avatar_url: null },
      protocol: "json",
      heartbeat_seconds: 30,
    });
    for (const id of [direct.id, groupId, replied.id]) await c.next((f) => f.type === "message" && f.message.id === id);
    t.equal(
      rawOf(raw, direct.id),
      JSON.stringify({
        type: "message",
        message: {
          id: direct.id,
          thread_id: direct.thread_id,
          from: { id: ada.id, display_name: "Ada" },
          body: "direct one",
          created_at: direct.created_at,
        },
      }),
      "a direct message: no `to` (Bo himself), no null avatar, no delivery_count 1",
    );
    t.equal(
      rawOf(raw, groupId),
      JSON.stringify({
        type: "message",
        message: {
          id: groupId,
          from: { id: ada.id, display_name: "Ada" },
          to: g,
          body: "to the group",
          created_at: group.created_at,
        },
      }),
      "a group message: `to` is the group, no `thread_id` (the same number)",
    );
    t.equal(thread, `thread_${g.slice("group_".length)}`);
    t.equal(
      rawOf(raw, replied.id),
      JSON.stringify({
        type: "message",
        message: {
          id: replied.id,
          from: { id: ada.id, display_name: "Ada" },
          to: g,
          body: "a reply",
          created_at: replied.created_at,
          // the quote's fields in the order its stored copy has them (jsonb's)
          reply_to: { id: groupId, body: "to the group", from: { id: ada.id, display_name: "Ada" } },
        },
      }),
      "a reply's quote without its author's null avatar",
    );
    for (const r of raw) {
      if (typeof r !== "string" || !r.startsWith('{"type":"message"')) continue;
      t.ok(LeanMessageFrame.safeParse(JSON.parse(r)).success, "a LeanMessageFrame");
      t.notOk(r.includes("null"), "no null anywhere");
    }
    // a live one, and the same again on the next connection (not acknowledged): delivery_count 2 is said
    const live = (await sendOk(base, ada, bo.id, "live")) as Message;
    const got = await c.next((f) => f.type === "message" && f.message.id === live.id);
    t.same(Object.keys(got.message), ["id", "thread_id", "from", "body", "created_at"]);
    c.close();
    const again = await open(bo, [WS_PROTOCOL.jsonLean]);
    const second = await again.c.next((f) => f.type === "message" && f.message.id === live.id);
    t.equal(second.message.delivery_count, 2, "a second delivery says its count");
    t.same(fullMessage(second.message, bo.id), { ...live, delivery_count: 2 });
  });

  t.test("a lean MessagePack client gets the same objects, binary (a third delivery: with its count)", async (t) => {
    const { c, raw } = await open(bo, [WS_PROTOCOL.msgpackLean]);
    t.equal(c.ws.protocol, "flock.msgpack.lean");
    t.equal((await c.nextOfType("ready")).protocol, "msgpack");
    for (const id of [direct.id, groupId, replied.id]) await c.next((f) => f.type === "message" && f.message.id === id);
    const frames = raw.filter((r) => r instanceof Uint8Array).map((r) => decode(r) as Obj);
    const ofId = (id: string) => frames.find((f) => f["type"] === "message" && (f["message"] as Obj)["id"] === id);
    t.same(ofId(direct.id)!["message"], {
      id: direct.id,
      thread_id: direct.thread_id,
      from: { id: ada.id, display_name: "Ada" },
      body: "direct one",
      created_at: direct.created_at,
      delivery_count: 3,
    });
    // the group message's count here depends on whether the last socket got it before it closed
    const gm = ofId(groupId)!["message"] as Obj;
    t.ok((gm["delivery_count"] as number) >= 2, "not a first delivery: its count is said");
    t.same(Object.keys(gm), ["id", "from", "to", "body", "created_at", "delivery_count"]);
    t.same(fullMessage(gm, bo.id), { ...group, delivery_count: gm["delivery_count"] });
  });

  t.test("clients not asking get today's frames, byte for byte", async (t) => {
    for (const protocols of [[WS_PROTOCOL.json], [], [WS_PROTOCOL.json, WS_PROTOCOL.jsonLean]]) {
      const { c, raw } = await open(di, protocols);
      t.equal(c.ws.protocol, protocols.length ? "flock.json" : "", `offered ${JSON.stringify(protocols)}`);
      const m = await c.next((f) => f.type === "message" && f.message.id === groupId);
      t.equal(
        rawOf(raw, groupId),
        `{"type":"message","message":${JSON.stringify({ ...group, delivery_count: m.message.delivery_count })}}`,
        "every field, `to`, `thread_id`, the null avatar, the count",
      );
      t.equal(group.from.avatar_url, null);
      c.close();
    }
    const { c, raw } = await open(di, [WS_PROTOCOL.msgpack]);
    await c.next((f) => f.type === "message" && f.message.id === groupId);
    const frame = raw
      .map((r) => (r instanceof Uint8Array ? (decode(r) as Obj) : null))
      .find((f) => f?.["type"] === "message");
    t.same(Object.keys(frame!["message"] as Obj), [...Object.keys(group), "delivery_count"], "MessagePack: all fields");
  });

  t.test("the SDK asks for lean frames and yields the Message a full frame carries", async (t) => {
    const cara = await registerAgent(base, "Cara");
    const g2 = await createGroup(base, ada, [cara]);
    const sentDirect = (await sendOk(base, ada, cara.id, "for the SDK")) as Message;
    const sentGroup = await postToGroup(base, ada, g2, "for the SDK's group");
    // what a full frame carries, as today's clients parse it
    const full = await open(cara, [WS_PROTOCOL.json]);
    const fullOf = async (id: string) =>
      (await full.c.next((f) => f.type === "message" && f.message.id === id)).message as Message;
    const expected = [await fullOf(sentDirect.id), await fullOf(sentGroup)];
    full.c.close();
    // the SDK, counting the lean frames the node builds meanwhile
    let lean = 0;
    const encode = jsonLeanCodec.encodeMessage;
    jsonLeanCodec.encodeMessage = (p, n) => (lean++, encode(p, n));
    t.teardown(() => {
      jsonLeanCodec.encodeMessage = encode;
    });
    const sdk = new Flock({ baseUrl: base, token: cara.token });
    const ac = new AbortController();
    const got: Message[] = [];
    for await (const m of sdk.messages({ transport: "ws", signal: ac.signal, ackOnExit: false })) {
      got.push(m);
      if (got.length === 2) ac.abort();
    }
    t.ok(lean >= 2, "the SDK's socket took lean frames");
    const byId2 = new Map(got.map((m) => [m.id, m]));
    for (const e of expected) {
      const m = byId2.get(e.id)!;
      t.same(m, { ...e, delivery_count: m.delivery_count }, `${e.to === cara.id ? "direct" : "group"}: the same`);
      t.equal(
        JSON.stringify({ ...m, delivery_count: 0 }),
        JSON.stringify({ ...e, delivery_count: 0 }),
        "its fields in the same order",
      );
    }
  });
});
