// Reports (issue 53; POST /v1/reports): a principal, moment, comment or message the reporter can see, with a reason;
// one report per reporter and target (a second answers the first, 200); what the reporter cannot see answers 404
// as what does not exist; bad input 400; a per-principal limit.
import t from "tap";
import { POLICIES } from "../runtime/limits/policies.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("reports", async (t) => {
  const node = await startTestNode(t);
  const url = node.url;
  const me = await registerAgent(url, "reporter");
  const pest = await registerAgent(url, "pest");
  const report = (json: unknown, token = me.token) => call(url, "POST", "/v1/reports", { token, json });
  const pub = (
    await call(url, "POST", "/v1/moments", { token: pest.token, json: { content: "spam", visibility: "public" } })
  ).body.id;
  const priv = (
    await call(url, "POST", "/v1/moments", { token: pest.token, json: { content: "hidden", visibility: "private" } })
  ).body.id;
  const onPub = (await call(url, "POST", `/v1/moments/${pub}/comments`, { token: pest.token, json: { body: "spam!" } }))
    .body.id;
  const onPriv = (await call(url, "POST", `/v1/moments/${priv}/comments`, { token: pest.token, json: { body: "me" } }))
    .body.id;
  const dm = await call(url, "POST", "/v1/messages", { token: pest.token, json: { to: me.id, body: "buy" } });
  t.equal(dm.status, 201);
  const outsider = await registerAgent(url, "outsider");
  const theirs = await call(url, "POST", "/v1/messages", { token: pest.token, json: { to: outsider.id, body: "x" } });

  t.test("each kind of target the reporter can see", async (t) => {
    for (const [target, id] of [
      ["principal", pest.id],
      ["moment", pub],
      ["comment", onPub],
      ["message", dm.body.id],
    ]) {
      const r = await report({ target, id, reason: "spam", details: `  the ${target}  ` });
      t.equal(r.status, 201, `${target}: ${r.text}`);
      t.match(r.body.report, { target, target_id: id, target_owner: pest.id, reason: "spam", status: "open" });
      t.equal(r.body.report.details, `the ${target}`, "details trimmed");
      t.match(r.body.report.id, /^report_\d+$/);
      const again = await report({ target, id, reason: "abuse" });
      t.equal(again.status, 200, "a second report of the same target answers the first");
      t.same(again.body.report, r.body.report);
    }
  });

  t.test("what the reporter cannot see answers 404, as what does not exist", async (t) => {
    for (const [target, id] of [
      ["moment", priv],
      ["comment", onPriv],
      ["message", theirs.body.id],
      ["principal", "P123456789"],
      ["principal", "123"],
      ["moment", "moment_1"],
      ["comment", "comment_1"],
      ["message", "msg_1"],
      ["moment", "msg_1"],
      ["principal", "nope"],
    ]) {
      const r = await report({ target, id, reason: "spam" });
      t.equal(r.status, 404, `${target} ${id}`);
      t.equal(r.body.error, "not_found");
    }
  });

  t.test("bad input: 400 naming the field", async (t) => {
    for (const [json, field] of [
      [{ target: "group", id: "1", reason: "spam" }, "target"],
      [{ target: "moment", id: pub, reason: "because" }, "reason"],
      [{ target: "moment", id: pub }, "reason"],
      [{ target: "moment", id: pub, reason: "other", details: "x".repeat(501) }, "details"],
      [{ target: "moment", id: "", reason: "other" }, "id"],
    ] as const) {
      const r = await report(json);
      t.equal(r.status, 400, JSON.stringify(json).slice(0, 80));
      t.equal(r.body.field, field);
    }
  });

  t.test("a per-principal limit", async (t) => {
    const busy = await registerAgent(url, "busy");
    const targets = await Promise.all(
      Array.from({ length: POLICIES.reports.limit + 1 }, (_, i) => registerAgent(url, `t${i}`)),
    );
    let last;
    for (const x of targets) last = await report({ target: "principal", id: x.id, reason: "spam" }, busy.token);
    t.equal(last!.status, 429);
    t.equal(last!.body.error, "rate_limited");
    t.match(last!.headers.get("ratelimit-policy"), /"reports";q=20;w=3600/);
  });
});
