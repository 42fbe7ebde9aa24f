// IP bans across nodes: a node started after a ban was published still refuses that address. The limiter's own rules
// (what a ban event is, how long a ban lasts, how the maps are swept) on the memory engines: test/unit/bans-limiter.test.ts.
import t from "tap";
import { call, randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("a node started after a ban was published still refuses that address", async (t) => {
  const env = { FLOCK_BAN_STRIKES: "3", FLOCK_BAN_SECONDS: "120" };
  const a = await startTestNode(t, { env });
  const ip = randomIp();
  const register = (base: string) =>
    call(base, "POST", "/v1/agents/register", { json: { display_name: "b" }, headers: { "x-forwarded-for": ip } });
  let last = 0;
  for (let i = 0; i < 14 && last !== 403; i++) last = (await register(a.url)).status;
  t.equal(last, 403, "banned on the first node");
  const b = await startTestNode(t, { schema: a.schema, prefix: a.prefix, env });
  const r = await call(b.url, "GET", "/v1/agents/me", { headers: { "x-forwarded-for": ip } });
  t.equal(r.status, 403, "refused by a node that never saw the ban's event");
  t.equal(r.body.error, "ip_banned");
  t.ok(r.body.retry_after > 100 && r.body.retry_after <= 120);
  t.equal(
    (await call(b.url, "GET", "/v1/agents/me", { headers: { "x-forwarded-for": randomIp() } })).status,
    401,
    "others pass",
  );
});
