// The node-to-node channels (runtime/engines/node-channels.ts): each codec takes back what it encoded, and refuses
// what does not fit; a malformed message is logged and dropped, and the handler never sees it.
import t from "tap";
import { CHANNELS, listen, publish } from "../../runtime/engines/node-channels.ts";
import { MemoryPubSub } from "../../runtime/engines/memory/pubsub.ts";
import { MIXES_WITH, PROTOCOL } from "../../runtime/release.ts";

t.test("every channel decodes what it encodes", async (t) => {
  const samples: [{ name: string; encode(v: never): string; decode(s: string): unknown }, unknown][] = [
    [CHANNELS.streamMessage, { origin: "ab12", key: "g:42", seq: 7, id: "123", payload: '{"body":"a b  c"}' }],
    [CHANNELS.groupMembers, { origin: "ab12", thread: "42", joined: ["1", "2"], left: [] }],
    [CHANNELS.authForget, "119688131209654272"],
    [CHANNELS.relationsForget, "P119688131209654272"],
    [CHANNELS.paymentsTerms, "119688131209654272"],
    [CHANNELS.limitsBan, { ip: "192.0.2.1", until: 1_800_000_000_000 }],
    [
      CHANNELS.presence,
      { id: "1", display_name: "a", avatar_url: "/v1/avatars/k3Jd9aQ0Vx1mZp7LbR2sTw", status: "online" },
    ],
    [
      CHANNELS.typing,
      { thread: "thread_42", from: { id: "1", display_name: "a", avatar_url: null }, state: "start", to: ["2"] },
    ],
    [CHANNELS.friendship, { a: "1", b: "2" }],
    [
      CHANNELS.read,
      { thread: "thread_42", from: { id: "1", display_name: "a", avatar_url: null }, through: "msg_7", to: ["1", "2"] },
    ],
    [
      CHANNELS.messageUpdate,
      {
        origin: "ab12",
        key: "g:42",
        id: "123",
        payload: '{"body":"edited","edited_at":"2026-11-28T08:00:00.000Z"}',
        to: ["2"],
      },
    ],
    [
      CHANNELS.friendRequest,
      {
        to: "P2",
        request: { id: "freq_9", from: "1", to: "P2", status: "pending", created_at: "2026-11-28T08:00:00.000Z" },
        from: { id: "1", display_name: "a", avatar_url: null },
      },
    ],
    [
      CHANNELS.moment,
      { author: "P1", visibility: "friends", payload: '{"id":"moment_5","content":"hi","visibility":"friends"}' },
    ],
    [CHANNELS.momentCounts, { id: "5", author: "P1", visibility: "public", by: "2", likes: 3, comments: 1, rev: 4 }],
    [CHANNELS.pushSubscribers, { principal: "P1", has: true }],
    [CHANNELS.webhook, { agent: "7", change: "disabled", reason: "failing" }],
  ];
  t.equal(samples.length, Object.keys(CHANNELS).length, "every channel is sampled");
  for (const [ch, v] of samples) t.same(ch.decode(ch.encode(v as never)), v, ch.name);
});

t.test("an author from a node that predates avatars reads as one without a picture", async (t) => {
  const old = JSON.stringify({ thread: "thread_42", from: { id: "1", display_name: "a" }, state: "stop", to: ["2"] });
  t.same(CHANNELS.typing.decode(old), {
    thread: "thread_42",
    from: { id: "1", display_name: "a", avatar_url: null },
    state: "stop",
    to: ["2"],
  });
});

t.test(
  "versions: each message carries this release's protocol; 0.1.0's (none) and newer ones that add fields are read; older than MIXES_WITH is refused",
  async (t) => {
    t.equal(PROTOCOL, 2);
    t.match(
      JSON.parse(CHANNELS.friendship.encode({ a: "1", b: "2" })),
      { v: PROTOCOL, a: "1", b: "2" },
      "a JSON message carries v",
    );
    t.ok(
      CHANNELS.streamMessage
        .encode({ origin: "ab12", key: "7", seq: 1, id: "5", payload: "{}" })
        .startsWith(`ab12;v=${PROTOCOL} 7 1 5 `),
      "the stream head carries ;v=",
    );
    // what a node of 0.1.0 sends: no version anywhere
    t.same(
      CHANNELS.friendship.decode('{"a":"1","b":"2"}'),
      { a: "1", b: "2" },
      "a JSON message without v is protocol 1",
    );
    t.same(
      CHANNELS.streamMessage.decode("ab12 7 1 5 {}"),
      { origin: "ab12", key: "7", seq: 1, id: "5", payload: "{}" },
      "a head without ;v= is protocol 1",
    );
    // a later protocol this release mixes with: it only adds what this one ignores
    t.same(
      CHANNELS.friendship.decode('{"v":3,"a":"1","b":"2","since":"x"}'),
      { a: "1", b: "2" },
      "a newer message's new fields are dropped",
    );
    t.same(
      CHANNELS.streamMessage.decode("ab12;v=3;z=9 7 1 5 {}"),
      { origin: "ab12", key: "7", seq: 1, id: "5", payload: "{}" },
      "a newer head's unknown attributes are ignored",
    );
    // below MIXES_WITH (here: 0, since 0.1.0's protocol 1 is still mixed with), or not a number
    for (const text of ['{"v":0,"a":"1","b":"2"}', '{"v":"2","a":"1","b":"2"}', '{"v":1.5,"a":"1","b":"2"}'])
      t.equal(CHANNELS.friendship.decode(text), undefined, text);
    t.equal(MIXES_WITH, 1);
    for (const text of ["ab12;v=0 7 1 5 {}", "ab12;v=x 7 1 5 {}", ";v=2 7 1 5 {}"])
      t.equal(CHANNELS.streamMessage.decode(text), undefined, text);
  },
);

t.test("a traceparent rides in the stream head; a malformed one is left out", async (t) => {
  const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const m = { origin: "ab12", key: "g:42", seq: 7, id: "123", payload: "{}", traceparent: tp };
  t.same(CHANNELS.streamMessage.decode(CHANNELS.streamMessage.encode(m)), m);
  t.same(CHANNELS.streamMessage.decode("ab12;v=2;tp=00-zz-1 g:42 7 123 {}"), {
    origin: "ab12",
    key: "g:42",
    seq: 7,
    id: "123",
    payload: "{}",
  });
  // that the previous release reads this head (traceparent and all) is tested with its real decoders: test/release-wire.test.ts
});

t.test("what does not fit is refused", async (t) => {
  const bad: [{ name: string; decode(s: string): unknown }, string][] = [
    [CHANNELS.streamMessage, "ab12 g:42 seven 123 {}"],
    [CHANNELS.streamMessage, "ab12 g:42 7 123 not-json"],
    [CHANNELS.streamMessage, "ab12 g:42"],
    [CHANNELS.groupMembers, '{"origin":"a","thread":"x1","joined":[],"left":[]}'],
    [CHANNELS.groupMembers, '{"origin":"a","thread":"1","joined":"1","left":[]}'],
    [CHANNELS.authForget, "a b"],
    [CHANNELS.limitsBan, '{"ip":"192.0.2.56 x","until":1}'],
    [CHANNELS.limitsBan, '{"ip":"192.0.2.57","until":"soon"}'],
    [CHANNELS.limitsBan, "{not json"],
    [CHANNELS.presence, '{"id":"1","display_name":"a","status":"away"}'],
    [CHANNELS.typing, '{"thread":"t","from":{"id":"1"},"state":"start","to":[]}'],
    [CHANNELS.friendship, '{"a":"1"}'],
    [CHANNELS.read, '{"thread":"t","from":{"id":"1","display_name":"a"},"through":"","to":[]}'],
    [CHANNELS.messageUpdate, '{"origin":"a","key":"g:1","id":"x1","payload":"{}","to":[]}'],
    [CHANNELS.messageUpdate, '{"origin":"a","key":"g:1","id":"1","payload":"not json","to":[]}'],
    [
      CHANNELS.friendRequest,
      '{"to":"P2","request":{"id":"freq_9","from":"1","to":"P2","status":"accepted","created_at":"x"},"from":{"id":"1","display_name":"a"}}',
    ],
  ];
  for (const [ch, text] of bad) t.equal(ch.decode(text), undefined, `${ch.name}: ${text}`);
});

t.test("listen: a malformed message is logged and dropped; a good one reaches the handler", async (t) => {
  const ps = new MemoryPubSub();
  const warned: unknown[] = [];
  const log = { warn: (o: unknown) => warned.push(o) } as never;
  const heard: unknown[] = [];
  await listen(ps, CHANNELS.friendship, log, (e) => heard.push(e));
  await ps.publish(CHANNELS.friendship.name, '{"a":1}');
  await publish(ps, CHANNELS.friendship, { a: "1", b: "2" });
  await new Promise((r) => setImmediate(r));
  t.same(heard, [{ a: "1", b: "2" }]);
  t.same(warned, [{ channel: "friendship", bytes: 7 }]);
});
