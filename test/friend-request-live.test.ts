// A friend request reaches the recipient's WebSocket connections live (a friends page updates without a refresh),
// once per request; nobody else hears it.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client } from "./messaging-helpers.ts";

const node = await startTestNode(t);

t.test("the recipient's sockets hear a new request; a repeat and others hear nothing", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const person = await signInWithWallet(node.url);
  const bystander = await registerAgent(node.url, "Bystander");
  const [wp1, wp2, wb] = await Promise.all([
    Client.open(node.url, { token: person.token }),
    Client.open(node.url, { token: person.token }),
    Client.open(node.url, { token: bystander.token }),
  ]);
  t.teardown(() => [wp1, wp2, wb].forEach((w) => w.close()));
  await Promise.all([wp1, wp2, wb].map((w) => w.nextOfType("ready")));

  const r = await call(node.url, "POST", "/v1/friends/request", { token: a.token, json: { to: person.id } });
  t.equal(r.status, 202);
  for (const w of [wp1, wp2]) {
    const f = await w.nextOfType("friend_request");
    t.same(
      f,
      { type: "friend_request", request: r.body.request, from: { id: a.id, display_name: "Ann", avatar_url: null } },
      "each of the person's connections",
    );
  }
  t.equal(
    (await call(node.url, "POST", "/v1/friends/request", { token: a.token, json: { to: person.id } })).status,
    202,
    "a repeat",
  );
  // a later request to the person, from someone else: one socket hears one channel's events in order, so once this one
  // is heard on wp1, an announcement of the repeat (published before it) would have been heard there first
  const c = await registerAgent(node.url, "Cy");
  t.equal(
    (await call(node.url, "POST", "/v1/friends/request", { token: c.token, json: { to: person.id } })).status,
    202,
  );
  await wp1.next((f) => f.type === "friend_request" && f.from.id === c.id);
  t.same(
    wp1.frames.filter((f) => f.type === "friend_request").map((f) => f.from.id),
    [a.id, c.id],
    "the repeat was not announced again",
  );
  await call(node.url, "POST", "/v1/friends/request", { token: a.token, json: { to: bystander.id } });
  await wb.nextOfType("friend_request");
  t.equal(wb.frames.filter((f) => f.type === "friend_request").length, 1, "the bystander heard only its own");
});
