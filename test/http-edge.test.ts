// Edges of the HTTP contract found by review: NUL characters, HEAD on a route with side effects, Allow.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("HTTP edges", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");

  t.test("a NUL character is a 400 naming the field, and nothing is written", async (t) => {
    const m = await call(node.url, "POST", "/v1/moments", {
      token: a.token,
      json: { content: "a\u0000b", visibility: "public" },
    });
    t.equal(m.status, 400);
    t.equal(m.body.error, "invalid_request");
    t.equal(m.body.field, "content");
    const msg = await call(node.url, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "x\u0000" } });
    t.equal(msg.status, 400);
    t.equal(msg.body.field, "body");
    const threads = await call(node.url, "GET", "/v1/threads", { token: a.token });
    t.same(threads.body.threads, [], "no thread was created by the refused send");
    const name = await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: "\u0000" } });
    t.equal(name.status, 400);
    const ok = await call(node.url, "POST", "/v1/moments", {
      token: a.token,
      json: { content: "a literal \\u0000 is fine", visibility: "public" },
    });
    t.equal(ok.status, 201);
    t.equal(ok.body.content, "a literal \\u0000 is fine");
  });

  t.test("HEAD does not hand out messages", async (t) => {
    const sent = await call(node.url, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "hi" } });
    t.equal(sent.status, 201);
    const head = await call(node.url, "HEAD", "/v1/messages/pending?timeout=0", { token: b.token });
    t.equal(head.status, 405);
    t.notMatch(head.headers.get("allow") ?? "", /HEAD/);
    const got = await call(node.url, "GET", "/v1/messages/pending?timeout=0", { token: b.token });
    t.equal(got.body.messages[0].delivery_count, 1, "the HEAD counted no delivery");
  });

  t.test("Allow lists HEAD beside GET where HEAD works", async (t) => {
    const r = await call(node.url, "PUT", "/v1/agents/me", { token: a.token });
    t.equal(r.status, 405);
    t.match(r.headers.get("allow"), /GET/);
    t.match(r.headers.get("allow"), /HEAD/);
    const h = await call(node.url, "HEAD", "/v1/agents/me", { token: a.token });
    t.equal(h.status, 200);
    t.equal(h.text, "");
  });
});
