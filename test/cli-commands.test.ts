// Every command of flockctl against a real node: profile, friends, threads, history --follow, groups, upload and
// the payment commands' checks (paying itself: test/cli-pay.test.ts). Apart from test/cli.test.ts so that tap runs
// the two files side by side.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { flock, start, tempDir } from "./helpers/cli.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

// about 70 runs of the CLI, one after another where each needs the one before: about 35 s on 2 idle cores, but more
// than the suite's 120 s a file when the cores are busy with other files
t.setTimeout(300_000);

t.test(
  "every command against a real node: profile, friends, threads, history --follow, groups, upload, payments",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
    const env = { FLOCK_URL: node.url };
    const register = async (name: string) => {
      const r = await flock(["register", name, "--json"], env);
      const { agent, token } = JSON.parse(r.stdout) as { agent: { id: string }; token: string };
      return { id: agent.id, env: { ...env, FLOCK_TOKEN: token } };
    };
    const [a, b, c] = await Promise.all([register("Ann"), register("Bob"), register("Cy")]);
    const json = async (args: string[], e: Record<string, string>) => {
      const r = await flock([...args, "--json"], e);
      t.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      return r.stdout === "" ? undefined : JSON.parse(r.stdout);
    };

    // profile: show and set, with the agent's privacy setting
    t.match((await flock(["profile"], a.env)).stdout, /^agent \d+\nname {9}Ann\n[\s\S]*group adds from anyone/);
    const set = await json(
      ["profile", "set", "--name", "Ann B", "--description", "tester", "--accepts-group-adds-from", "friends"],
      a.env,
    );
    t.match(set.agent, { display_name: "Ann B", description: "tester", accepts_group_adds_from: "friends" });
    t.equal(
      (await flock(["profile", "set", "--accepts-messages-from", "anyone"], a.env)).code,
      2,
      "a person's setting, refused for an agent",
    );
    t.equal((await flock(["profile", "set"], a.env)).code, 2, "nothing to change");
    const person = await signInWithWallet(node.url);
    const human = await json(["profile", "set", "--accepts-messages-from", "anyone", "--name", "Pat"], {
      ...env,
      FLOCK_TOKEN: person.token,
    });
    t.match(human.user, { id: person.id, display_name: "Pat", accepts_messages_from: "anyone" });
    t.match((await flock(["whoami"], { ...env, FLOCK_TOKEN: person.token })).stdout, new RegExp(`^${person.id} Pat`));
    // a picture from a file: uploaded and set in one command; shown in the profile; removed with none
    const pic = join(tempDir(t, "avatar"), "me.png");
    writeFileSync(
      pic,
      Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
        "base64",
      ),
    );
    const pictured = (await json(["profile", "set", "--avatar", pic], a.env)).agent;
    t.match(pictured.avatar_url, /^\/v1\/avatars\/[\w-]{22}$/, "--avatar uploads the image and sets it");
    t.match((await flock(["profile"], a.env)).stdout, new RegExp(`picture +${pictured.avatar_url}`));
    t.equal((await fetch(node.url + pictured.avatar_url)).status, 200, "its address answers without credentials");
    t.equal(
      (await json(["profile", "set", "--avatar", "none"], a.env)).agent.avatar_url,
      null,
      "--avatar none removes it",
    );

    // friends: request, requests, accept, list, remove (and decline)
    const req = await json(["friend", "request", b.id], a.env);
    t.match((await flock(["friend", "requests"], b.env)).stdout, new RegExp(`in   ${req.request.id}  from ${a.id}`));
    t.match(await json(["friend", "accept", req.request.id], b.env), { friend: { id: a.id } });
    t.match(await json(["friend", "list"], a.env), [{ id: b.id }]);
    t.match((await flock(["friend", "remove", b.id], a.env)).stdout, `no longer friends with ${b.id}`);
    t.same(await json(["friend", "list"], a.env), []);
    const req2 = await json(["friend", "request", c.id], a.env);
    t.match((await flock(["friend", "decline", req2.request.id], c.env)).stdout, `declined ${req2.request.id}`);

    // direct messages: threads, history by the other's id, oldest first
    const first = await json(["send", b.id, "one"], a.env);
    await json(["send", a.id, "two"], b.env);
    const threads = await json(["threads"], a.env);
    t.match(threads.threads, [
      { id: first.thread_id, kind: "direct", peer: { id: b.id }, last_message: { body: "two" } },
    ]);
    t.match((await flock(["threads"], a.env)).stdout, new RegExp(`^${first.thread_id}  with Bob \\(${b.id}\\)`));
    t.match(
      (await flock(["threads"], a.env)).stdout,
      /\[1 unread\]  Bob: two\n\(end\)\n1 unread in all$/m,
      "Bob's message is unread",
    );
    t.match(
      (await flock(["read", b.id], a.env)).stdout,
      new RegExp(`^${first.thread_id} read through msg_\\d+; 0 unread$`, "m"),
      "read marks through the newest",
    );
    t.equal((await json(["threads"], a.env)).unread_total, 0);
    t.match(
      await json(["read", first.thread_id, first.id], a.env),
      { read_through: threads.threads[0].last_message.id },
      "an older message does not move the marker back",
    );
    const history = await flock(["history", b.id], a.env);
    t.match(history.stdout, /: one\n.*: two$/m, "oldest first");
    t.same(
      (await json(["history", first.thread_id], a.env)).messages.map((m: { body: string }) => m.body),
      ["two", "one"],
      "--json: the page as the API answers it",
    );
    const none = await flock(["history", c.id], a.env);
    t.equal(none.code, 4);
    t.match(none.stderr, new RegExp(`no conversation with ${c.id} yet\\nflockctl send ${c.id}`));
    t.match(
      (await flock(["edit", first.id, "one, edited"], a.env)).stdout,
      new RegExp(`^edited ${first.id} at 20`, "m"),
    );
    t.match((await flock(["history", b.id], a.env)).stdout, /: one, edited \(edited\)\n/, "history shows the edit");
    t.match((await flock(["delete", first.id], a.env)).stdout, `deleted ${first.id}`);
    t.match((await flock(["history", b.id], a.env)).stdout, /: \(deleted\)\n/, "and the tombstone");
    const notMine = await flock(["edit", first.id, "x"], b.env);
    t.not(notMine.code, 0, "Bob cannot edit Ann's message");
    const question = await json(["send", b.id, "lunch at noon?"], a.env);
    const answer = await json(["send", a.id, "yes", "--reply-to", question.id], b.env);
    t.equal(answer.reply_to.id, question.id, "send --reply-to");
    t.match(
      (await flock(["history", b.id, "--limit", "1"], a.env)).stdout,
      /\[re Ann[^:]*: lunch at noon\?\] yes/,
      "history shows the quote",
    );
    t.match((await flock(["react", question.id, "👍"], b.env)).stdout, `${question.id}: 👍 1`);
    t.match((await flock(["react", question.id, "👍", "--undo"], b.env)).stdout, `${question.id}: no reactions`);
    t.match((await flock(["search", "messages", "lunch"], b.env)).stdout, /lunch at noon\?/, "search messages");
    t.match(
      (await flock(["search", "people", "Bob"], a.env)).stdout,
      new RegExp(`${b.id}  Bob  \\(agent\\)`),
      "search people",
    );

    // history --follow: the history, then each new message as it comes, until Ctrl-C; it acknowledges nothing
    const follower = start(["history", b.id, "--follow"], a.env);
    let followed = "";
    follower.stdout!.on("data", (d: Buffer) => (followed += d.toString()));
    await until(() => followed.includes(": two"), { ms: 15_000, every: 50, what: () => followed });
    await json(["send", a.id, "three"], b.env);
    await until(() => followed.includes(": three"), { ms: 15_000, every: 50, what: () => followed });
    const exited = new Promise<number | null>((r) => follower.once("exit", r));
    follower.kill("SIGINT");
    t.equal(await exited, 0, "Ctrl-C ends it cleanly");
    t.equal(followed.match(/: three/g)?.length, 1, "each message once");

    // groups: create, list, show, add, remove, send, history, leave
    const g = (await json(["group", "create", "crew", b.id], a.env)).group;
    t.match(g, { name: "crew", owner: a.id, members: [{ id: a.id }, { id: b.id }] });
    t.match(await json(["group", "list"], b.env), [{ id: g.id, name: "crew" }]);
    t.match((await flock(["group", "show", g.id], a.env)).stdout, new RegExp(`^${g.id}  crew[\\s\\S]*${b.id}  Bob`));
    t.equal((await json(["group", "add", g.id, c.id], a.env)).group.members.length, 3);
    const sent = await json(["group", "send", g.id, "hello crew"], a.env);
    t.match(sent, { thread_id: g.thread_id, body: "hello crew" });
    t.match((await flock(["history", g.id], c.env)).stdout, /Ann B \(\d+\) in thread_\d+: hello crew/);
    t.match((await flock(["group", "remove", g.id, c.id], a.env)).stdout, `removed ${c.id} from ${g.id}`);
    t.match((await flock(["group", "leave", g.id], b.env)).stdout, `left ${g.id}`);
    t.same(
      (await json(["group", "show", g.id], a.env)).group.members.map((m: { id: string }) => m.id),
      [a.id],
    );

    // files: upload, attach, download
    const dir = tempDir(t, "files");
    writeFileSync(join(dir, "note.txt"), "hello file\n");
    const f = await json(["upload", join(dir, "note.txt")], a.env);
    t.match(f, { id: /^file_/, name: "note.txt", content_type: "text/plain", size: 11 });
    const withFile = await json(["send", b.id, "see attached", "--attach", f.id], a.env);
    t.match(withFile.attachments, [{ id: f.id, name: "note.txt" }]);
    const saved = join(dir, "copy.txt");
    t.match((await flock(["download", f.id, "--out", saved], b.env)).stdout, `saved ${f.id} to ${saved}`);
    t.equal(readFileSync(saved, "utf8"), "hello file\n");

    // payments: the list, and paying needs a wallet key (never a flag) and a cap
    const [list, noKey, noCap, negative] = await Promise.all([
      flock(["payments"], a.env),
      flock(["pay", b.id, "hi", "--max", "0.5"], a.env),
      flock(["pay", b.id, "hi"], { ...a.env, FLOCK_PRIVATE_KEY: `0x${"1".repeat(64)}` }),
      flock(["pay", b.id, "hi", "--max", "-1"], a.env),
    ]);
    t.match(list.stdout, "(no payments yet)");
    t.equal(noKey.code, 2);
    t.match(noKey.stderr, /^error: FLOCK_PRIVATE_KEY is not set\nexport FLOCK_PRIVATE_KEY=0x/);
    t.match(noCap.stderr, /pay needs --max DOLLARS/);
    t.match(negative.stderr, /^--max must be an amount of US dollars above 0/);
    // a free agent charges nothing: pay sends as send does
    const free = await flock(["pay", b.id, "free one", "--max", "0.5"], {
      ...a.env,
      FLOCK_PRIVATE_KEY: `0x${"1".repeat(64)}`,
    });
    t.equal(free.code, 0, free.stderr);
    t.match(free.stdout, /^sent msg_\d+ in thread_\d+ \(it charged nothing\)/);
  },
);
