// Avatars: a person or an agent picks one of its own uploaded images; every author object then carries its
// `avatar_url`, a public address (no credentials) naming a random key. Only one's own images, only PNG, JPEG, GIF or
// WebP, at most 1 MiB; a new picture keeps the address, removing it makes the address answer 404.
import t from "tap";
import WebSocket from "ws";
import { call, type Registered, randomIp, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend } from "./helpers/social.ts";

const node = await startTestNode(t);
const base = node.url;

// a real 1x1 PNG, and a JPEG's first bytes (the type is read from the bytes, not from what the client says)
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 7)]);

async function upload(who: { token: string }, data: Buffer, name: string): Promise<string> {
  const r = await call(base, "POST", `/v1/files/upload?name=${name}`, {
    token: who.token,
    body: data as unknown as string,
    headers: { "content-type": "application/octet-stream", "x-forwarded-for": randomIp() },
  });
  if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${r.text}`);
  return r.body.id;
}

const setAvatar = (path: string, who: { token: string }, avatar: string | null) =>
  call(base, "PATCH", path, { token: who.token, json: { avatar } });

async function fetchAvatar(url: string, headers: Record<string, string> = {}) {
  const r = await fetch(base + url, { headers });
  return { status: r.status, headers: r.headers, data: Buffer.from(await r.arrayBuffer()) };
}

/** The ready frame of a WebSocket opened with `who`'s token. */
async function readyFrame(who: Registered | { token: string }): Promise<{ principal: Record<string, unknown> }> {
  const ws = new WebSocket(`${base.replace("http", "ws")}/v1/ws`, {
    headers: { authorization: `Bearer ${who.token}` },
  });
  try {
    return await new Promise((resolve, reject) => {
      ws.on("message", (d) => {
        const f = JSON.parse(String(d));
        if (f.type === "ready") resolve(f);
      });
      ws.on("error", reject);
    });
  } finally {
    ws.close();
  }
}

t.test("a person's picture: set, shown without credentials, carried by author objects, changed, removed", async (t) => {
  const h = await signInWithWallet(base);
  const friend = await registerAgent(base, "Friend");
  await befriend(base, { id: h.id, token: h.token, display_name: "" }, friend);

  const none = await call(base, "GET", "/v1/users/me", { token: h.token });
  t.equal(none.body.user.avatar_url, null, "none until one is set");

  const png = await upload(h, PNG, "me.png");
  const set = await setAvatar("/v1/users/me", h, png);
  t.equal(set.status, 200);
  const url: string = set.body.user.avatar_url;
  t.match(url, /^\/v1\/avatars\/[A-Za-z0-9_-]{22}$/, "a public address with a random key");

  const got = await fetchAvatar(url);
  t.equal(got.status, 200, "served without credentials");
  t.equal(got.headers.get("content-type"), "image/png");
  t.same(got.data, PNG, "the bytes uploaded");
  t.equal(got.headers.get("x-content-type-options"), "nosniff");
  const etag = got.headers.get("etag")!;
  t.equal((await fetchAvatar(url, { "if-none-match": etag })).status, 304, "revalidated by its tag");

  // author objects: the friends list, a moment, a message (live, polled and in history), the thread list, the ready frame
  t.equal(
    (await call(base, "GET", "/v1/friends", { token: friend.token })).body.friends[0].avatar_url,
    url,
    "in a friend's list",
  );
  const m = await call(base, "POST", "/v1/moments", {
    token: h.token,
    json: { content: "with a face", visibility: "friends" },
  });
  t.equal(m.status, 201);
  const feed = await call(base, "GET", "/v1/moments/feed", { token: friend.token });
  t.equal(
    feed.body.moments.find((x: { content: string }) => x.content === "with a face")?.author.avatar_url,
    url,
    "on a moment in the feed",
  );
  const sent = await call(base, "POST", "/v1/messages", { token: h.token, json: { to: friend.id, body: "hello" } });
  t.equal(sent.status, 201);
  const polled = await call(base, "GET", "/v1/messages/pending?timeout=0", { token: friend.token });
  t.equal(polled.body.messages[0].from.avatar_url, url, "on a message, as delivered");
  const threads = await call(base, "GET", "/v1/threads", { token: friend.token });
  t.equal(threads.body.threads[0].peer.avatar_url, url, "as the peer in the thread list");
  t.equal(threads.body.threads[0].last_message.from.avatar_url, url, "on the thread's last message");
  const history = await call(base, "GET", `/v1/threads/${threads.body.threads[0].id}/messages`, {
    token: friend.token,
  });
  t.equal(history.body.messages[0].from.avatar_url, url, "in history");
  t.equal((await readyFrame(h)).principal.avatar_url, url, "in the WebSocket's ready frame");
  const found = await call(base, "GET", `/v1/search/people?q=${encodeURIComponent(h.display_name)}`, {
    token: friend.token,
  });
  t.equal(found.body.people.find((p: { id: string }) => p.id === h.id)?.avatar_url, url, "in people search");

  // a new picture keeps the address and serves the new bytes
  const jpeg = await upload(h, JPEG, "me.jpg");
  const changed = await setAvatar("/v1/users/me", h, jpeg);
  t.equal(changed.body.user.avatar_url, url, "the same address");
  const now = await fetchAvatar(url, { "if-none-match": etag });
  t.equal(now.status, 200, "the old tag no longer matches");
  t.equal(now.headers.get("content-type"), "image/jpeg");
  t.same(now.data, JPEG);

  // removed: gone from author objects and from the address
  const removed = await setAvatar("/v1/users/me", h, null);
  t.equal(removed.body.user.avatar_url, null);
  t.equal((await fetchAvatar(url)).status, 404, "the address answers 404 once removed");
  t.equal((await call(base, "GET", "/v1/friends", { token: friend.token })).body.friends[0].avatar_url, null);
  const again = await setAvatar("/v1/users/me", h, png);
  t.not(again.body.user.avatar_url, url, "a picture set after a removal gets a new address");
});

t.test("an agent's picture, in a group's members and on its group messages", async (t) => {
  const a = await registerAgent(base, "Pictured");
  const b = await registerAgent(base, "Plain");
  const set = await setAvatar("/v1/agents/me", a, await upload(a, PNG, "bot.png"));
  t.equal(set.status, 200);
  const url = set.body.agent.avatar_url;
  t.match(url, /^\/v1\/avatars\//);
  t.equal(
    (await call(base, "GET", `/v1/agents/${a.id}`, { token: b.token })).body.agent.avatar_url,
    url,
    "on the public profile",
  );
  const g = await call(base, "POST", "/v1/groups", { token: a.token, json: { name: "Crew", members: [b.id] } });
  t.equal(g.status, 201);
  const members = g.body.group.members as { id: string; avatar_url: string | null }[];
  t.same(
    members.map((m) => [m.id, m.avatar_url]),
    [
      [a.id, url],
      [b.id, null],
    ],
    "members with their pictures, or null",
  );
  t.equal(
    (await call(base, "POST", `/v1/groups/${g.body.group.id}/messages`, { token: a.token, json: { body: "hi crew" } }))
      .status,
    201,
  );
  const got = await call(base, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
  t.equal(got.body.messages[0].from.avatar_url, url, "on a group message");
});

t.test("only one's own images, of the kinds and size allowed; a key nobody was given answers 404", async (t) => {
  const a = await registerAgent(base, "Careful");
  const other = await registerAgent(base, "Other");
  const theirs = await upload(other, PNG, "theirs.png");
  const refusals: [string, unknown][] = [
    ["someone else's image", theirs],
    ["a file id that does not exist", "file_123456789"],
    ["not a file id", "hello"],
    ["a text file", await upload(a, Buffer.from("just text"), "notes.txt")],
    [
      "an image over 1 MiB",
      await upload(a, Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(1024 * 1024, 1)]), "big.png"),
    ],
  ];
  for (const [what, avatar] of refusals) {
    const r = await setAvatar("/v1/agents/me", a, avatar as string);
    t.equal(r.status, 400, what);
    t.equal(r.body.error, "invalid_request", what);
    t.equal(r.body.field, "avatar", what);
  }
  const bad = await call(base, "PATCH", "/v1/agents/me", { token: a.token, json: { avatar: 5 } });
  t.equal(bad.status, 400, "a number");
  t.equal(
    (await call(base, "GET", "/v1/agents/me", { token: a.token })).body.agent.avatar_url,
    null,
    "nothing was set by any of them",
  );
  t.equal((await fetchAvatar("/v1/avatars/AAAAAAAAAAAAAAAAAAAAAA")).status, 404, "a well-formed key nobody has");
  t.equal((await fetchAvatar("/v1/avatars/..%2F..%2Fetc")).status, 404, "a malformed key");
});
