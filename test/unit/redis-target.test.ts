// REDIS_URL names one Redis or a Redis Cluster: what the configuration accepts, what the engines are told, and how a
// cluster URL's password is masked in messages.
import t from "tap";
import { loadConfig } from "../../runtime/config.ts";
import { redisTarget } from "../../runtime/engines/redis/target.ts";
import { redactUrl } from "../../runtime/redact.ts";

t.test("a cluster URL lists nodes, with optional credentials and TLS", async (t) => {
  t.same(redisTarget("redis://127.0.0.1:6379"), { kind: "single", url: "redis://127.0.0.1:6379" });
  t.same(redisTarget("redis+cluster://10.0.0.1:7000,10.0.0.2:7001"), {
    kind: "cluster",
    nodes: [
      { host: "10.0.0.1", port: 7000 },
      { host: "10.0.0.2", port: 7001 },
    ],
    username: undefined,
    password: undefined,
    tls: false,
  });
  t.same(redisTarget("rediss+cluster://app:p%40ss@cache-1:6380,[::1]:6381/"), {
    kind: "cluster",
    nodes: [
      { host: "cache-1", port: 6380 },
      { host: "::1", port: 6381 },
    ],
    username: "app",
    password: "p@ss",
    tls: true,
  });
  t.equal(loadConfig({ REDIS_URL: "redis+cluster://h1:7000,h2:7001" }).REDIS_URL, "redis+cluster://h1:7000,h2:7001");
});

t.test("a bad REDIS_URL stops the start with the reason", async (t) => {
  t.throws(
    () => loadConfig({ REDIS_URL: "redis+cluster://h1,h2:7001" }),
    /REDIS_URL: bad cluster URL: "h1" is not host:port/,
  );
  t.throws(() => loadConfig({ REDIS_URL: "redis+cluster://h1:99999" }), /REDIS_URL: bad cluster URL/);
  t.throws(
    () => loadConfig({ REDIS_URL: "http://h1:6379" }),
    /REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or redis\+cluster/,
  );
  t.throws(() => loadConfig({ REDIS_URL: "not a url" }), /REDIS_URL: must be/);
});

t.test("a cluster URL's password is masked", async (t) => {
  t.equal(redactUrl("redis+cluster://app:secret@h1:7000,h2:7001"), "redis+cluster://app:***@h1:7000,h2:7001");
  t.equal(redactUrl("redis+cluster://h1:7000,h2:7001"), "redis+cluster://h1:7000,h2:7001");
  t.equal(redactUrl("redis://:secret@h1:6379"), "redis://:***@h1:6379");
});
