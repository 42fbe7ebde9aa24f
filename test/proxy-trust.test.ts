// The client address behind proxies: X-Forwarded-For is read from the right, skipping the hops TRUST_PROXY trusts
// (proxy-addr's rule), so the entries a client writes itself never become its address. Over HTTP here; the rule and
// the TRUST_PROXY setting on their own: test/unit/client-ip.test.ts.
import t from "tap";
import { call, randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";

const register = (base: string, xff: string) =>
  call(base, "POST", "/v1/agents/register", { json: { display_name: "p" }, headers: { "x-forwarded-for": xff } });

for (const spec of ["1", "loopback"]) {
  t.test(`a client cannot pick its address by writing X-Forwarded-For (TRUST_PROXY=${spec})`, async (t) => {
    const node = await startTestNode(t, { engine: "memory", env: { TRUST_PROXY: spec } });
    // the proxy appends the real client (ip); the client wrote a different address before it every time
    const ip = randomIp();
    for (let i = 0; i < 10; i++) t.equal((await register(node.url, `${randomIp()}, ${ip}`)).status, 201);
    const r = await register(node.url, `${randomIp()}, ${ip}`);
    t.equal(r.status, 429, "the per-IP limit counts the address the proxy saw");
    t.equal((await register(node.url, `${ip}, ${randomIp()}`)).status, 201, "a written entry names nobody");
  });
}

t.test("without TRUST_PROXY the header is ignored", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { TRUST_PROXY: "0" } });
  for (let i = 0; i < 10; i++) t.equal((await register(node.url, randomIp())).status, 201);
  t.equal((await register(node.url, randomIp())).status, 429, "every request is the peer's");
});
