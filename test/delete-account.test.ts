import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import t from "tap";
import { call, randomIp, type Registered, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, feedPage, post } from "./helpers/social.ts";
import { SoftAuthenticator } from "./helpers/soft-authenticator.ts";

const START = Date.parse("2026-04-01T08:00:00Z");
const DAY = 86_400_000;

const upload = (base: string, who: Registered, data: Buffer) =>
  call(base, "POST", "/v1/files/upload", {
    token: who.token,
    body: data as unknown as string,
    headers: { "content-type": "application/octet-stream" },
  });
const like = (base: string, who: Registered, id: string) =>
  call(base, "POST", `/v1/moments/${id}/like`, { token: who.token });
const comment = (base: string, who: Registered, id: string, body: string) =>
  call(base, "POST", `/v1/moments/${id}/comments`, { token: who.token, json: { body } });
const remove = (base: string, who: Registered) =>
  call(base, "DELETE", "/v1/users/me", { token: who.token, headers: { "x-forwarded-for": randomIp() } });

/** Every row in the database that still names `id`, table by table (messages.sender excepted). */
async function traces(sql: import("../runtime/db/client.ts").Sql, id: string): Promise<Record<string, number>> {
  const [r] = await sql`select
    (select count(*)::int from principals where id = ${id}) as principals,
    (select count(*)::int from tokens where principal = ${id}) as tokens,
    (select count(*)::int from wallets where principal = ${id}) as wallets,
    (select count(*)::int from identities where principal = ${id}) as identities,
    (select count(*)::int from moments where author = ${id}) as moments,
    (select count(*)::int from moment_likes where principal = ${id}) as likes,
    (select count(*)::int from moment_comments where author = ${id}) as comments,
    (select count(*)::int from friendships where principal = ${id} or friend = ${id}) as friendships,
    (select count(*)::int from friend_requests where from_id = ${id} or to_id = ${id}) as friend_requests,
    (select count(*)::int from thread_members where principal = ${id}) as thread_members,
    (select count(*)::int from inboxes where principal = ${id}) as inboxes,
    (select count(*)::int from stream_cursors where member = ${id}) as cursors,
    (select count(*)::int from stream_acks where member = ${id}) as acks,
    (select count(*)::int from handout_counts where member = ${id}) as handout_counts,
    (select count(*)::int from files where owner = ${id}) as files,
    (select count(*)::int from file_shares where principal = ${id}) as file_shares`;
  return r as Record<string, number>;
}

for (const engine of ["redis", "memory"] as const) {
  t.test(`account deletion (${engine} engines)`, async (t) => {
    let clock = START;
    const dir = mkdtempSync(join(tmpdir(), "flock-del-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const idp = await generateKeyPair("ES256", { extractable: true });
    const node = await startTestNode(t, {
      engine,
      now: () => clock,
      env: { FILES_DIR: dir, PRIVY_APP_ID: "app", PRIVY_VERIFICATION_KEY: await exportSPKI(idp.publicKey) },
    });
    const base = node.url;
    const sql = node.svc.sql;

    t.test("a human with moments, likes, comments, friends, messages and files", async (t) => {
      const d = await signInWithWallet(base); // the account to delete
      const a = await registerAgent(base, "alice"); // D's friend
      const b = await signInWithWallet(base); // a human bystander, friend of A

      await befriend(base, d, a);
      await befriend(base, a, b);
      const pending = await call(base, "POST", "/v1/friends/request", { token: d.token, json: { to: b.id } });
      t.equal(pending.status, 202, "a request to a person");

      const dPublic = await post(base, d, "public", "d public");
      const dFriends = await post(base, d, "friends", "d friends");
      await post(base, d, "private", "d private");
      const aPublic = await post(base, a, "public", "a public");
      const aFriends = await post(base, a, "friends", "a friends");
      const bPublic = await post(base, b, "public", "b public");

      // D reacts to others' moments; others react to D's and to each other's.
      for (const m of [aPublic, aFriends, bPublic]) t.equal((await like(base, d, m.id)).status, 204);
      t.equal((await comment(base, d, aPublic.id, "d on a 1")).status, 201);
      t.equal((await comment(base, d, aPublic.id, "d on a 2")).status, 201);
      t.equal((await comment(base, d, bPublic.id, "d on b")).status, 201);
      t.equal((await like(base, a, aPublic.id)).status, 204);
      t.equal((await like(base, b, aPublic.id)).status, 204);
      t.equal((await comment(base, b, aPublic.id, "b on a")).status, 201);
      t.equal((await like(base, a, dPublic.id)).status, 204);
      t.equal((await comment(base, a, dPublic.id, "a on d")).status, 201);

      // Feeds warmed (cached timelines) and showing D's moments and reactions.
      const feedA = await feedPage(base, a);
      t.ok(feedA.moments.some((m) => m.id === dFriends.id));
      t.equal(feedA.moments.find((m) => m.id === aPublic.id)!.like_count, 3);
      t.equal(feedA.moments.find((m) => m.id === aPublic.id)!.comment_count, 3);
      const feedB = await feedPage(base, b);
      t.ok(feedB.moments.some((m) => m.id === dPublic.id));

      // Messages both ways, and a group D owns (with its friend A: B, not D's friend, cannot be added by D).
      const toA = await call(base, "POST", "/v1/messages", { token: d.token, json: { to: a.id, body: "hi from d" } });
      t.equal(toA.status, 201);
      t.equal(
        (await call(base, "POST", "/v1/messages", { token: a.token, json: { to: d.id, body: "hi d" } })).status,
        201,
      );
      const group = await call(base, "POST", "/v1/groups", { token: d.token, json: { name: "duo", members: [a.id] } });
      t.equal(group.status, 201, group.text);
      const groupId = group.body.group.id as string;
      const gm = await call(base, "POST", `/v1/groups/${groupId}/messages`, {
        token: d.token,
        json: { body: "group hi from d" },
      });
      t.equal(gm.status, 201, gm.text);

      // Files: one only D has, one whose bytes A also uploaded; D shared the first with A.
      const only = randomBytes(2048);
      const common = randomBytes(2048);
      const dOnly = await upload(base, d, only);
      const dCommon = await upload(base, d, common);
      const aCommon = await upload(base, a, common);
      t.equal(dOnly.status, 201);
      // as an attachment of D's first message to A shares it (migration 0022: a share in the thread, the message carrying it)
      const [fileId, threadId, messageId] = [dOnly.body.id.slice(5), toA.body.thread_id.slice(7), toA.body.id.slice(4)];
      await sql`insert into file_shares (file_id, principal, thread_id) values (${fileId}, ${a.id}, ${threadId})`;
      await sql`insert into message_files (file_id, thread_id, message_id) values (${fileId}, ${threadId}, ${messageId})`;
      t.equal((await call(base, "GET", `/v1/files/${dOnly.body.id}`, { token: a.token })).status, 200);
      const blob = (s: string) => join(dir, s.slice(0, 2), s.slice(2, 4), s);
      t.ok(existsSync(blob(dOnly.body.sha256)));

      // Delete.
      const del = await remove(base, d);
      t.equal(del.status, 204, del.text);
      t.equal(del.text, "");

      // The token is dead at once, everywhere.
      const me = await call(base, "GET", "/v1/users/me", { token: d.token });
      t.equal(me.status, 401);
      t.equal(
        (await call(base, "POST", "/v1/moments", { token: d.token, json: { content: "x", visibility: "public" } }))
          .status,
        401,
      );

      // Nothing in the database names D any more (messages it sent excepted).
      t.same(
        Object.values(await traces(sql, d.id)).filter((n) => n !== 0),
        [],
        "no rows left",
      );

      // Feeds forget D; counts are exact.
      const afterA = await feedPage(base, a);
      t.notOk(
        afterA.moments.some((m) => m.author.id === d.id),
        "A's feed has none of D's moments",
      );
      const ap = afterA.moments.find((m) => m.id === aPublic.id)!;
      t.equal(ap.like_count, 2, "A's moment: likes of A and B remain");
      t.equal(ap.comment_count, 1, "A's moment: B's comment remains");
      t.equal(afterA.moments.find((m) => m.id === aFriends.id)!.like_count, 0);
      const afterB = await feedPage(base, b);
      t.notOk(
        afterB.moments.some((m) => m.author.id === d.id),
        "B's feed has none of D's moments",
      );
      const bp = afterB.moments.find((m) => m.id === bPublic.id)!;
      t.equal(bp.like_count, 0);
      t.equal(bp.comment_count, 0);
      const comments = await call(base, "GET", `/v1/moments/${aPublic.id}/comments`, { token: a.token });
      t.same(
        comments.body.map((c: { body: string }) => c.body),
        ["b on a"],
      );
      t.equal((await call(base, "GET", `/v1/moments/${dPublic.id}/comments`, { token: a.token })).status, 404);
      const [stored] = await sql`select like_count, comment_count from moments where id = ${aPublic.id.slice(7)}`;
      t.same(stored, { like_count: 2, comment_count: 1 });

      // Friends and requests forget D; A and B are still friends.
      const friendsA = await call(base, "GET", "/v1/friends", { token: a.token });
      t.same(
        friendsA.body.friends.map((f: { id: string }) => f.id),
        [b.id],
      );
      const reqB = await call(base, "GET", "/v1/friends/requests", { token: b.token });
      t.same(reqB.body.incoming, []);
      // a request to the deleted person answers as to any person (202): it does not tell that D is gone
      t.equal((await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: d.id } })).status, 202);

      // Messages D sent stay with their recipients, from a deleted author.
      const threads = await call(base, "GET", "/v1/threads", { token: a.token });
      const direct = threads.body.threads.find((th: { kind: string }) => th.kind === "direct");
      t.equal(direct.peer.id, d.id);
      const history = await call(base, "GET", `/v1/threads/${direct.id}/messages`, { token: a.token });
      t.same(
        history.body.messages.map((m: { body: string; from: { id: string; display_name: string } }) => [
          m.body,
          m.from.id,
          m.from.display_name,
        ]),
        [
          ["hi d", a.id, "alice"],
          ["hi from d", d.id, "[deleted]"],
        ],
      );
      const groupView = await call(base, "GET", `/v1/groups/${groupId}`, { token: a.token });
      t.equal(groupView.status, 200, "the group lives on without its owner");
      t.same(
        groupView.body.group.members.map((m: { id: string }) => m.id),
        [a.id],
      );
      const gh = await call(base, "GET", `/v1/threads/thread_${groupId.slice(6)}/messages`, { token: a.token });
      t.same(
        gh.body.messages.map((m: { body: string; from: { display_name: string } }) => [m.body, m.from.display_name]),
        [["group hi from d", "[deleted]"]],
      );
      t.equal(
        (await call(base, "POST", "/v1/messages", { token: a.token, json: { to: d.id, body: "still there?" } })).status,
        404,
      );

      // Files: D's are gone (also for those it shared them with); A's copy of the same bytes is intact.
      t.equal((await call(base, "GET", `/v1/files/${dOnly.body.id}`, { token: a.token })).status, 404);
      t.equal((await call(base, "GET", `/v1/files/${dCommon.body.id}`, { token: a.token })).status, 404);
      const aFile = await fetch(`${base}/v1/files/${aCommon.body.id}`, {
        headers: { authorization: `Bearer ${a.token}` },
      });
      t.equal(aFile.status, 200);
      t.ok(Buffer.from(await aFile.arrayBuffer()).equals(common));
      t.notOk(existsSync(blob(dOnly.body.sha256)), "D's own blob removed");
      t.ok(existsSync(blob(aCommon.body.sha256)), "the blob A still names is kept");

      // Others' data intact.
      t.equal((await call(base, "GET", "/v1/users/me", { token: b.token })).status, 200);
      t.equal((await call(base, "GET", "/v1/agents/me", { token: a.token })).status, 200);
      const [counts] = await sql`select
        (select count(*)::int from moments where author in (${a.id}, ${b.id})) as moments,
        (select count(*)::int from moment_likes where principal in (${a.id}, ${b.id})) as likes,
        (select count(*)::int from moment_comments where author in (${a.id}, ${b.id})) as comments`;
      t.same(
        counts,
        { moments: 3, likes: 2, comments: 1 },
        "A's and B's own moments and reactions to surviving moments",
      );

      // The same wallet signs in again: a new account, whose deletion within 24 hours is refused.
      const again = await signInWithWallet(base, d.wallet);
      t.not(again.id, d.id);
      const refused = await remove(base, again);
      t.equal(refused.status, 429);
      t.equal(refused.body.error, "rate_limited");
      t.ok(Number(refused.headers.get("retry-after")) > 86_000);
      t.equal(
        (await call(base, "GET", "/v1/users/me", { token: again.token })).status,
        200,
        "refused: nothing deleted",
      );
      clock += DAY;
      const later = await remove(base, await signInWithWallet(base, d.wallet));
      t.equal(later.status, 204, "a day later it may go");
    });

    t.test("the limit follows an identity-provider subject too", async (t) => {
      const mint = () =>
        new SignJWT({})
          .setProtectedHeader({ alg: "ES256" })
          .setIssuer("privy.io")
          .setAudience("app")
          .setSubject("did:privy:leaver")
          .setIssuedAt(Math.floor(clock / 1000))
          .setExpirationTime(Math.floor(clock / 1000) + 600)
          .sign(idp.privateKey);
      const login = async () => {
        const r = await call(base, "POST", "/v1/auth/privy-login", {
          json: { token: await mint() },
          headers: { "x-forwarded-for": randomIp() },
        });
        t.equal(r.status, 200, r.text);
        return { id: r.body.user.id as string, token: r.body.token as string, display_name: "" };
      };
      const first = await login();
      t.equal((await remove(base, first)).status, 204);
      const second = await login();
      t.not(second.id, first.id);
      t.equal((await remove(base, second)).status, 429);
    });

    t.test("the limit follows a passkey too", async (t) => {
      const key = new SoftAuthenticator(base.replace("127.0.0.1", "localhost"));
      const signUp = async () => {
        const post = (path: string, json: object) =>
          call(base, "POST", path, { json, headers: { "x-forwarded-for": randomIp() } });
        const o = await post("/v1/auth/passkey/register-options", { display_name: "Leaver" });
        const up = await post("/v1/auth/passkey/register", {
          challenge_id: o.body.challenge_id,
          response: key.register(o.body.options, key.credentials[0]),
        });
        t.equal(up.status, 200, up.text);
        return { id: up.body.user.id as string, token: up.body.token as string, display_name: "" };
      };
      const first = await signUp();
      t.equal((await remove(base, first)).status, 204);
      const second = await signUp(); // the same passkey signs up again: a new person
      t.not(second.id, first.id);
      t.equal((await remove(base, second)).status, 429, "its deletion within 24 hours is refused");
    });

    t.test("an agent deletes itself", async (t) => {
      const agent = await registerAgent(base, "leaving");
      const friend = await registerAgent(base, "stays");
      await befriend(base, agent, friend);
      const m = await post(base, agent, "public", "bye");
      t.equal((await like(base, friend, m.id)).status, 204);
      t.equal(
        (await call(base, "POST", "/v1/messages", { token: agent.token, json: { to: friend.id, body: "farewell" } }))
          .status,
        201,
      );
      const del = await remove(base, agent);
      t.equal(del.status, 204);
      t.equal((await call(base, "GET", "/v1/agents/me", { token: agent.token })).status, 401);
      t.same(
        Object.values(await traces(sql, agent.id)).filter((n) => n !== 0),
        [],
      );
      const pendingMsgs = await call(base, "GET", "/v1/messages/pending?timeout=0", { token: friend.token });
      t.same(
        pendingMsgs.body.messages.map((x: { body: string }) => x.body),
        ["farewell"],
        "the message stays with its recipient",
      );
      t.equal((await call(base, "GET", "/v1/friends", { token: friend.token })).body.friends.length, 0);
      t.equal((await call(base, "GET", `/v1/agents/${agent.id}`, { token: friend.token })).status, 404);
    });
  });
}
