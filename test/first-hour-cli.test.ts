// flockctl's first hour against a real node: `--json` prints the API's answer, so the READMEs' jq paths work
// (`jq -r .group.id`, `.agent.id`); a token that is not a Flock token, or one the server no longer knows, says where
// it came from and what to do, keeping the server's error code.
import t, { type Test } from "tap";
import { flock } from "./helpers/cli.ts";
import { startTestNode } from "./helpers/node.ts";

t.setTimeout(240_000);
const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
const env = { FLOCK_URL: node.url };

async function register(name: string) {
  const r = await flock(["register", name, "--json"], env);
  const { agent, token } = JSON.parse(r.stdout) as { agent: { id: string }; token: string };
  return { id: agent.id, env: { ...env, FLOCK_TOKEN: token } };
}

/** The command's --json output, parsed; the run must succeed. */
async function json(t: Test, args: string[], e: Record<string, string>) {
  const r = await flock([...args, "--json"], e);
  t.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, any>;
}

t.test("--json is the API's answer: whoami and profile under agent, groups under group", async (t) => {
  const [ann, bob, cy] = await Promise.all([register("Ann"), register("Bob"), register("Cy")]);
  const me = await json(t, ["whoami"], ann.env);
  t.match(me, { agent: { id: ann.id, display_name: "Ann" } }, "whoami: .agent.id");
  t.match(await json(t, ["profile"], ann.env), { agent: { id: ann.id } }, "profile: .agent.id");
  t.match(
    await json(t, ["profile", "set", "--description", "tester"], ann.env),
    { agent: { id: ann.id, description: "tester" } },
    "profile set: .agent",
  );

  const created = await json(t, ["group", "create", "crew", bob.id], ann.env);
  t.match(created, { group: { name: "crew", owner: ann.id } }, "group create: .group");
  const groupId = created["group"]?.id as string;
  t.match(groupId, /\S/, "jq -r .group.id gives the group's id");
  t.match(await json(t, ["group", "show", groupId], ann.env), { group: { id: groupId, name: "crew" } });
  const added = await json(t, ["group", "add", groupId, cy.id], ann.env);
  t.equal(added["group"]?.members?.length, 3, "group add: .group.members");
});

t.test("a bad token says where it came from and what to do; the error code stays", async (t) => {
  const ann = await register("Dee");
  const [garbage, quoted, flagged, unknown, asJson] = await Promise.all([
    flock(["whoami"], { ...env, FLOCK_TOKEN: "not-a-token" }),
    flock(["whoami"], { ...env, FLOCK_TOKEN: `"${ann.env.FLOCK_TOKEN}"` }),
    flock(["whoami", "--token", `Bearer ${ann.env.FLOCK_TOKEN}`], env),
    flock(["whoami"], { ...env, FLOCK_TOKEN: `am_${"z".repeat(43)}` }),
    flock(["whoami", "--json"], { ...env, FLOCK_TOKEN: "not-a-token" }),
  ]);
  for (const [r, from] of [
    [garbage, "the token in FLOCK_TOKEN"],
    [quoted, "the token in FLOCK_TOKEN"],
    [flagged, "the token \\(--token\\)"],
  ] as const) {
    t.equal(r.code, 3, "unauthorized exits 3");
    t.match(r.stderr, /^error 401 unauthorized: /, "the server's status and code");
    t.match(
      r.stderr,
      new RegExp(
        `\\n${from} is not a Flock token .*: sign in again with flockctl login <token>, or register a new agent`,
      ),
    );
  }
  t.equal(unknown.code, 3);
  t.match(unknown.stderr, /\nthe token in FLOCK_TOKEN was refused \(revoked, replaced or expired\): sign in again/);
  t.equal(asJson.code, 3);
  t.match(JSON.parse(asJson.stderr), { error: "unauthorized", hint: /^the token in FLOCK_TOKEN is not a Flock token/ });
});
