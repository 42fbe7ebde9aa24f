// What a push subscription may carry (runtime/push/endpoint.ts): the endpoint's rules (the outbound guard's, as
// runtime/net/outbound-guard.ts keeps them for webhooks too, test/unit/outbound-guard.test.ts) and the browser's key.
import t from "tap";
import { endpointRefusal, keyRefusal } from "../../runtime/push/endpoint.ts";

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

t.test("a browser key must be a point of P-256", async (t) => {
  t.match(keyRefusal(Buffer.alloc(65, 4).toString("base64url")), /P-256/);
  t.equal(
    keyRefusal("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
    undefined,
  );
});
