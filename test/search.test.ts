// Search (GET /v1/search/people and /v1/search/messages): agents are found by anyone, a person only by whoever may
// see them (friends, shared conversations), and messages only in the caller's own threads. Nobody finds what they
// could not read.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, createGroup, postToGroup, sendOk } from "./messaging-helpers.ts";

const node = await startTestNode(t);
const tag = `z${Date.now().toString(36)}`;

const people = async (token: string, q: string, extra = "") => {
  const r = await call(node.url, "GET", `/v1/search/people?q=${encodeURIComponent(q)}${extra}`, { token });
  if (r.status !== 200) throw new Error(`people: ${r.status} ${r.text}`);
  return r.body.people as { id: string; display_name: string; kind: string; friend: boolean }[];
};
const messages = (token: string, q: string, extra = "") =>
  call(node.url, "GET", `/v1/search/messages?q=${encodeURIComponent(q)}${extra}`, { token });

t.test(
  "people: agents by name or id for anyone; a person only for friends and those sharing a conversation",
  async (t) => {
    const me = await registerAgent(node.url, `${tag} Searcher`);
    const scout = await registerAgent(node.url, `${tag} Scout`);
    const scoutling = await registerAgent(node.url, `The ${tag} Scoutling`);
    const friendPerson = await signInWithWallet(node.url);
    const chatPerson = await signInWithWallet(node.url);
    const stranger = await signInWithWallet(node.url);
    for (const [h, name] of [
      [friendPerson, `${tag} Scout Friend`],
      [chatPerson, `${tag} Scout Chat`],
      [stranger, `${tag} Scout Stranger`],
    ] as const) {
      t.equal(
        (await call(node.url, "PATCH", "/v1/users/me", { token: h.token, json: { display_name: name } })).status,
        200,
      );
    }
    await befriend(node.svc.sql, me.id, friendPerson.id);
    await sendOk(node.url, chatPerson, me.id, "hi agent"); // a person may write to an agent: they now share a thread

    const found = await people(me.token, `${tag} scout`);
    const ids = found.map((p) => p.id);
    t.ok(ids.includes(scout.id) && ids.includes(scoutling.id), "agents, any case, anywhere in the name");
    t.ok(ids.includes(friendPerson.id), "a friend");
    t.ok(ids.includes(chatPerson.id), "someone the caller shares a conversation with");
    t.notOk(ids.includes(stranger.id), "not a stranger, whatever the name");
    t.notOk(ids.includes(me.id), "not the caller");
    t.equal(found.find((p) => p.id === friendPerson.id)?.friend, true);
    t.equal(found.find((p) => p.id === scout.id)?.kind, "agent");
    t.equal(
      found.findIndex((p) => p.id === scout.id) < found.findIndex((p) => p.id === scoutling.id),
      true,
      "a name starting with the text before one containing it",
    );
    t.same((await people(me.token, `${tag} scout`, "&limit=2")).length, 2, "limit");

    t.same(
      (await people(me.token, scout.id)).map((p) => p.id),
      [scout.id],
      "an agent by its id",
    );
    t.same(await people(me.token, stranger.id), [], "a stranger's id finds nothing: the answer tells nothing");
    t.same(
      await people(me.token, "%"),
      (await people(me.token, "%")).filter((p) => p.display_name.includes("%")),
      "% is a character, not a wildcard",
    );

    const r = await call(node.url, "GET", "/v1/search/people?q=", { token: me.token });
    t.equal(r.status, 400, "q is required");
    t.equal(
      (await call(node.url, "GET", `/v1/search/people?q=x&limit=51`, { token: me.token })).status,
      400,
      "limit at most 50",
    );
    t.equal((await call(node.url, "GET", "/v1/search/people?q=x")).status, 401, "anonymous");
  },
);

t.test("messages: full-text search of the caller's own threads only, newest first, with paging", async (t) => {
  const a = await registerAgent(node.url, "Ann");
  const b = await registerAgent(node.url, "Bob");
  const c = await registerAgent(node.url, "Cy");
  const word = `${tag}invoice`;
  const m1 = await sendOk(node.url, a, b.id, `the ${word} for march`);
  const m2 = await sendOk(node.url, b, a.id, `paid the ${word.toUpperCase()}, thanks`);
  await sendOk(node.url, c, b.id, `Cy's own ${word} to Bob`);
  const g = await createGroup(node.url, a, [b]);
  const gm = await postToGroup(node.url, b, g, `group ${word} notes`);
  const gone = await sendOk(node.url, a, b.id, `a ${word} to delete`);
  t.equal((await call(node.url, "DELETE", `/v1/messages/${gone.id}`, { token: a.token })).status, 204);

  let r = await messages(a.token, word);
  t.equal(r.status, 200);
  t.same(
    r.body.messages.map((m: any) => m.id),
    [gm, m2.id, m1.id],
    "Ann's three, newest first, any case; not Cy's to Bob, not the deleted one",
  );
  t.equal(r.body.has_more, false);
  r = await messages(a.token, word, "&limit=2");
  t.same(
    r.body.messages.map((m: any) => m.id),
    [gm, m2.id],
  );
  t.equal(r.body.has_more, true);
  r = await messages(a.token, word, `&limit=2&before=${m2.id}`);
  t.same(
    r.body.messages.map((m: any) => m.id),
    [m1.id],
    "the next page",
  );

  r = await messages(a.token, `"${word} for march"`);
  t.same(
    r.body.messages.map((m: any) => m.id),
    [m1.id],
    "a phrase",
  );
  r = await messages(a.token, `${word} -march`);
  t.same(
    r.body.messages.map((m: any) => m.id),
    [gm, m2.id],
    "a word excluded",
  );
  r = await messages(c.token, word);
  t.same(
    r.body.messages.map((m: any) => m.body),
    [`Cy's own ${word} to Bob`],
    "Cy finds only Cy's own thread",
  );
  r = await messages(c.token, "march");
  t.notOk(
    r.body.messages.some((m: any) => m.id === m1.id),
    "not a message of a thread Cy is not in",
  );

  t.equal((await messages(a.token, "")).status, 400, "q is required");
  t.equal((await messages(a.token, word, "&before=nonsense")).status, 400, "before must be a message id");
  t.equal((await messages(a.token, "a & | ! ( ) :* <->")).status, 200, "operators in q are words, not an error");
});
