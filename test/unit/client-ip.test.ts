// The client address behind proxies, on its own: X-Forwarded-For is read from the right, skipping the hops TRUST_PROXY
// trusts (proxy-addr's rule), so the entries a client writes itself never become its address. Over HTTP:
// test/proxy-trust.test.ts.
import t from "tap";
import { ConfigError, loadConfig } from "../../runtime/config.ts";
import { resolveClientIp } from "../../runtime/http/client-ip.ts";

const trustOf = (spec: string) => loadConfig({ TRUST_PROXY: spec }).TRUST_PROXY;

t.test("TRUST_PROXY is a trust spec, compiled when the configuration loads", async (t) => {
  t.equal(loadConfig({}).TRUST_PROXY, undefined, "off by default");
  for (const off of ["0", "false"]) t.equal(trustOf(off), undefined, `${off} is off`);
  for (const spec of [
    "loopback",
    "10.0.0.0/8,192.168.0.0/16",
    "10.0.0.0/8, 192.168.0.0/16",
    "1",
    "2",
    "true",
    "::1",
    "loopback,uniquelocal",
  ]) {
    t.type(trustOf(spec), "function", `${spec} is a trust spec`);
  }
  for (const bad of ["10.0.0.0/99", "not-an-address", "10.0.0.0/8,,", "-1", "1.5", "10.0.0.0/8, nope", "33"]) {
    let err: unknown;
    try {
      trustOf(bad);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof ConfigError, `${JSON.stringify(bad)} is a configuration error`);
    t.match((err as Error | undefined)?.message, /TRUST_PROXY/, "naming the variable");
  }
});

t.test("the address is the first hop from the right that is not trusted", async (t) => {
  const hop1 = trustOf("1")!;
  const hop2 = trustOf("2")!;
  const loop = trustOf("loopback")!;
  const nets = trustOf("10.0.0.0/8,192.168.0.0/16")!;
  // one trusted hop: what the proxy appended, never what the client wrote before it
  t.equal(resolveClientIp("127.0.0.1", "192.0.2.55, 203.0.113.7", hop1), "203.0.113.7");
  t.equal(resolveClientIp("127.0.0.1", "203.0.113.7", hop1), "203.0.113.7");
  t.equal(resolveClientIp("127.0.0.1", undefined, hop1), "127.0.0.1", "no header: the peer");
  t.equal(resolveClientIp("127.0.0.1", "192.0.2.55, 203.0.113.7, 10.0.0.2", hop2), "203.0.113.7", "two hops");
  // by address: every trusted hop is skipped, the first untrusted one is the client
  t.equal(resolveClientIp("::1", "192.0.2.55, 203.0.113.7, 127.0.0.1", loop), "203.0.113.7");
  t.equal(
    resolveClientIp("::ffff:127.0.0.1", "203.0.113.7", loop),
    "203.0.113.7",
    "an IPv4-mapped peer is loopback too",
  );
  t.equal(resolveClientIp("10.1.1.1", "192.0.2.55, 203.0.113.7, 192.168.1.1, 10.2.2.2", nets), "203.0.113.7");
  // a peer that is not trusted is the client, whatever it says
  t.equal(resolveClientIp("198.51.100.9", "192.0.2.55", loop), "198.51.100.9");
  t.equal(resolveClientIp("198.51.100.9", "192.0.2.55", undefined), "198.51.100.9", "off: the peer");
  // what is not an address never becomes one: the nearest address known to be real is used instead
  t.equal(resolveClientIp("127.0.0.1", "192.0.2.55 99999999999999, 127.0.0.1", loop), "127.0.0.1");
  t.equal(resolveClientIp("127.0.0.1", "unknown", hop1), "127.0.0.1");
  t.equal(resolveClientIp("127.0.0.1", "10.0.0.1 x", hop1), "127.0.0.1");
  t.equal(resolveClientIp("127.0.0.1", ", ,", hop1), "127.0.0.1", "empty entries are skipped");
  t.equal(resolveClientIp("127.0.0.1", "2001:DB8::1", hop1), "2001:db8::1", "lower case");
});
