// A retired token stops working on live WebSockets too, on every node.
import t from "tap";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client } from "./messaging-helpers.ts";

t.test("rotating a token closes sockets opened with the old one (4401), on both nodes", async (t) => {
  const one = await startTestNode(t);
  const two = await startTestNode(t, { schema: one.schema, prefix: one.prefix });
  const a = await registerAgent(one.url, "rotor");
  const onOne = await Client.open(one.url, { token: a.token });
  const onTwo = await Client.open(two.url, { protocols: [`bearer.${a.token}`] });
  t.teardown(() => {
    onOne.close();
    onTwo.close();
  });
  await onOne.nextOfType("ready");
  await onTwo.nextOfType("ready");

  const rotated = await call(one.url, "POST", "/v1/agents/me/token", { token: a.token });
  t.equal(rotated.status, 200);
  const [c1, c2] = await Promise.all([onOne.waitClose(), onTwo.waitClose()]);
  t.equal(c1.code, 4401);
  t.equal(c2.code, 4401);

  const fresh = await Client.open(two.url, { token: rotated.body.token });
  t.teardown(() => fresh.close());
  await fresh.nextOfType("ready");
  t.equal(fresh.closed, null, "the new token opens a socket");
});
