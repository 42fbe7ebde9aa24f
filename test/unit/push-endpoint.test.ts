// Where a push may go (runtime/push/endpoint.ts): the endpoint's own check, and the lookup a push connects through,
// which refuses a name resolving to a non-public address and answers only the address it checked.
import t from "tap";
import { checkedLookup, endpointRefusal, keyRefusal } from "../../runtime/push/endpoint.ts";

const lookup = (allow: boolean, name: string, all = false) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    checkedLookup(allow)(name, { all }, (err, address) => resolve({ err, address })),
  );

t.test("the endpoint's own rules", async (t) => {
  for (const [endpoint, why] of [
    ["http://push.example/x", /https/],
    ["https://127.0.0.1/x", /loopback, private/],
    ["https://[fe80::1]/x", /loopback, private/],
    ["https://192.168.1.10/x", /loopback, private/],
    ["https://push/x", /public host/],
    ["https://printer.local/x", /public host/],
    ["https://a:b@push.example/x", /credentials/],
    ["not a url", /https/],
  ] as const)
    t.match(endpointRefusal(endpoint, false), why, endpoint);
  t.equal(endpointRefusal("https://updates.push.services.mozilla.com/wpush/v2/x", false), undefined);
  t.equal(endpointRefusal("https://8.8.8.8/x", false), undefined, "a public address");
  t.equal(endpointRefusal("http://127.0.0.1:9/x", true), undefined, "allowed for development");
  t.match(endpointRefusal("ftp://127.0.0.1/x", true), /http/);
});

t.test("a name resolving to loopback is refused when pushing, unless allowed", async (t) => {
  const refused = await lookup(false, "localhost");
  t.equal(refused.err?.code, "EPRIVATEADDRESS");
  const allowed = await lookup(true, "localhost");
  t.equal(allowed.err, null);
  t.match(String(allowed.address), /^(127\.0\.0\.1|::1)$/, "the address checked is the one connected to");
  const all = await lookup(true, "localhost", true);
  t.ok(Array.isArray(all.address) && all.address.length > 0);
});

t.test("a browser key must be a point of P-256", async (t) => {
  t.match(keyRefusal(Buffer.alloc(65, 4).toString("base64url")), /P-256/);
  t.equal(
    keyRefusal("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
    undefined,
  );
});
