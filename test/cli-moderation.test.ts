// flockctl's report and moderation commands (`report`, `mod ...`) against a real node: a report reaches the queue,
// a moderator resolves it, suspends and lifts, removes a moment and reads the audit log; anyone else's `mod` is 404
// (exit 4); a missing --reason is a usage error (exit 2).
import t from "tap";
import { grantModerator } from "../runtime/moderation/moderation-store.ts";
import { flock } from "./helpers/cli.ts";
import { startTestNode } from "./helpers/node.ts";

t.setTimeout(240_000);

t.test("report and mod commands", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const env = { FLOCK_URL: node.url };
  const register = async (name: string) => {
    const r = await flock(["register", name, "--json"], env);
    const { agent, token } = JSON.parse(r.stdout) as { agent: { id: string }; token: string };
    return { id: agent.id, env: { ...env, FLOCK_TOKEN: token } };
  };
  const [mod, user, pest] = await Promise.all([register("Mod"), register("User"), register("Pest")]);
  await grantModerator(node.svc.sql, mod.id);
  const json = async (args: string[], e: Record<string, string>) => {
    const r = await flock([...args, "--json"], e);
    t.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    return r.stdout === "" ? undefined : JSON.parse(r.stdout);
  };

  const m = await json(["post", "cheap pills"], pest.env);
  const rep = await json(["report", "moment", m.id, "spam", "--details", "again"], user.env);
  t.match(rep.report, { target: "moment", target_id: m.id, reason: "spam", details: "again", status: "open" });
  t.equal((await flock(["report", "group", "x", "spam"], user.env)).code, 2, "a target that is none: usage");
  t.equal((await flock(["report", "moment", "moment_1", "spam"], user.env)).code, 4, "what cannot be seen: 404");

  t.equal((await flock(["mod", "reports"], user.env)).code, 4, "not a moderator: 404 (exit 4)");
  const queue = await flock(["mod", "reports"], mod.env);
  t.equal(queue.code, 0, queue.stderr);
  t.match(queue.stdout, new RegExp(`${rep.report.id}  moment ${m.id} of ${pest.id}: spam \\(by ${user.id}\\)`));
  t.equal((await flock(["mod", "resolve", rep.report.id], mod.env)).code, 2, "--reason is required");
  t.match((await flock(["mod", "resolve", rep.report.id, "--reason", "removed"], mod.env)).stdout, /^resolved report_/);

  t.match((await flock(["mod", "remove", "moment", m.id, "--reason", "spam"], mod.env)).stdout, /^removed moment/);
  const s = await json(["mod", "suspend", pest.id, "--reason", "spam", "--remove-content"], mod.env);
  t.same(s, { principals: [pest.id], removed: { moments: 0, comments: 0, messages: 0 } });
  const refused = await flock(["feed"], pest.env);
  t.not(refused.code, 0, "the suspended principal's commands are refused");
  t.match(refused.stderr, /suspended/);
  t.match((await flock(["mod", "unsuspend", pest.id, "--reason", "appeal"], mod.env)).stdout, `lifted ${pest.id}`);
  t.equal((await flock(["feed"], pest.env)).code, 0, "lifted");

  const audit = await flock(["mod", "audit"], mod.env);
  t.equal(audit.code, 0);
  const lines = audit.stdout.trim().split("\n");
  t.match(lines[0], `${mod.id} unsuspend principal ${pest.id}: appeal`);
  t.match(lines[1], `${mod.id} suspend principal ${pest.id}: spam`);
  t.match(lines[2], `${mod.id} remove moment ${m.id}: spam`);
  t.match(lines[3], `${mod.id} resolve_report report ${rep.report.id}: removed`);
});
