// FLOCK_PUBLIC_URL and the metrics listener's settings as the configuration reads them, and the base URL the node
// names in what it hands out (runtime/public-url.ts): the configured one, else the address it listens on.
import t from "tap";
import { loadConfig } from "../../runtime/config.ts";
import { publicUrl } from "../../runtime/public-url.ts";
import { SelfAddress } from "../../runtime/self-address.ts";

t.test("FLOCK_PUBLIC_URL is a base URL, kept without its trailing slash", async (t) => {
  t.equal(loadConfig({}).FLOCK_PUBLIC_URL, undefined, "unset by default");
  t.equal(loadConfig({ FLOCK_PUBLIC_URL: "" }).FLOCK_PUBLIC_URL, undefined, "set empty: unset");
  t.equal(loadConfig({ FLOCK_PUBLIC_URL: "https://flock.example" }).FLOCK_PUBLIC_URL, "https://flock.example");
  t.equal(loadConfig({ FLOCK_PUBLIC_URL: "https://flock.example/" }).FLOCK_PUBLIC_URL, "https://flock.example");
  t.equal(loadConfig({ FLOCK_PUBLIC_URL: "HTTP://Flock.Example:8080/" }).FLOCK_PUBLIC_URL, "http://flock.example:8080");
  t.equal(
    loadConfig({ FLOCK_PUBLIC_URL: "https://flock.example:443" }).FLOCK_PUBLIC_URL,
    "https://flock.example",
    "the default port dropped",
  );
  t.equal(
    loadConfig({ FLOCK_PUBLIC_URL: "https://example.com/flock/" }).FLOCK_PUBLIC_URL,
    "https://example.com/flock",
    "a proxy's path prefix",
  );
  t.equal(loadConfig({ FLOCK_PUBLIC_URL: "http://[::1]:8080" }).FLOCK_PUBLIC_URL, "http://[::1]:8080");
});

t.test("a FLOCK_PUBLIC_URL that is not an http(s) base stops the start naming it", async (t) => {
  for (const bad of [
    "flock.example",
    "/v1",
    "ftp://flock.example",
    "ws://flock.example",
    "https://user:pw@flock.example",
    "https://flock.example/?a=1",
    "https://flock.example/#top",
    "https://flock.example?",
  ]) {
    t.throws(() => loadConfig({ FLOCK_PUBLIC_URL: bad }), /FLOCK_PUBLIC_URL: .* is not a base URL/, bad);
  }
});

t.test("the metrics listener: off unless FLOCK_METRICS_PORT is set, on loopback by default", async (t) => {
  const c = loadConfig({});
  t.equal(c.FLOCK_METRICS_PORT, undefined);
  t.equal(c.FLOCK_METRICS_HOST, "127.0.0.1");
  t.equal(loadConfig({ FLOCK_METRICS_PORT: "9464" }).FLOCK_METRICS_PORT, 9464);
  t.equal(loadConfig({ FLOCK_METRICS_PORT: "0" }).FLOCK_METRICS_PORT, 0, "0 picks a free port");
  t.equal(loadConfig({ FLOCK_METRICS_PORT: "" }).FLOCK_METRICS_PORT, undefined, "set empty: unset");
  t.equal(loadConfig({ FLOCK_METRICS_HOST: "0.0.0.0" }).FLOCK_METRICS_HOST, "0.0.0.0");
  for (const bad of ["70000", "-1", "x", "1.5"])
    t.throws(() => loadConfig({ FLOCK_METRICS_PORT: bad }), /FLOCK_METRICS_PORT/, bad);
});

t.test("publicUrl: the configured base, else the listening address (a wildcard bind named 127.0.0.1)", async (t) => {
  const self = new SelfAddress();
  const unset = loadConfig({ PORT: "8080" });
  t.equal(
    publicUrl(unset, self, "/v1/messages"),
    "http://127.0.0.1:8080/v1/messages",
    "before the listen: the configured port",
  );
  self.set("0.0.0.0", 41234);
  t.equal(
    publicUrl(unset, self, "/v1/messages"),
    "http://127.0.0.1:41234/v1/messages",
    "0.0.0.0: loopback, at the bound port",
  );
  self.set("::", 41234);
  t.equal(publicUrl(unset, self, "/v1/messages"), "http://127.0.0.1:41234/v1/messages", ":: too");
  self.set("10.1.2.3", 8080);
  t.equal(publicUrl(unset, self, "/v1/messages"), "http://10.1.2.3:8080/v1/messages", "a specific address as it is");
  self.set("::1", 8080);
  t.equal(publicUrl(unset, self, "/v1/messages"), "http://[::1]:8080/v1/messages", "IPv6 in brackets");
  const set = loadConfig({ FLOCK_PUBLIC_URL: "https://example.com/flock/" });
  t.equal(publicUrl(set, self, "/v1/messages"), "https://example.com/flock/v1/messages", "the configured base wins");
});
