// A search's bounds (runtime/search/bounded.ts) on real Postgres: with the messages table locked by another session,
// a search is cancelled at its statement bound and answers 503 in the one error shape, without opening the node's
// Postgres circuit (the node stays ready, other requests go on) and counted by the slow-request log; a node runs at
// most SEARCH_RUNNING searches at once, so other requests still find a pooled connection, and past SEARCH_WAITING
// waiting one more answers 503 at once.
import t from "tap";
import { SEARCH_RUNNING, SEARCH_STATEMENT_MS, SEARCH_WAITING } from "../runtime/search/bounded.ts";
import { holdLock } from "./helpers/hold-lock.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { parseScrape, total } from "./helpers/scrape.ts";

t.test("a search past its bound, and more searches than the node runs at once", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "1000" } });
  const me = await registerAgent(node.url, "searcher");
  const search = (q: string) => call(node.url, "GET", `/v1/search/messages?q=${q}`, { token: me.token });
  t.equal((await search("warm")).status, 200);

  // another session holds the messages table: every search's statement waits on it
  const lock = await holdLock(t, `lock table "${node.schema}".messages in access exclusive mode`);

  const searches = Array.from({ length: SEARCH_RUNNING + SEARCH_WAITING + 1 }, (_, i) => search(`w${i}`));
  const settled = new Set<number>();
  searches.forEach((p, i) => void p.then(() => settled.add(i)));
  // the one past the queue answers at once, while the others wait
  const first = await Promise.race(searches.map((p, i) => p.then((r) => ({ r, i }))));
  t.equal(first.r.status, 503, "one search more than run and wait is refused at once");
  t.equal(first.r.body.error, "unavailable");
  t.match(first.r.body.message, /too many searches/);
  t.equal(first.r.headers.get("retry-after"), "1");

  // meanwhile the node answers what needs Postgres: searches hold SEARCH_RUNNING of the pool's 4 connections
  const me2 = await call(node.url, "GET", "/v1/agents/me", { token: me.token });
  t.equal(me2.status, 200, "another request is answered while searches wait on the lock");
  t.ok(!settled.has(0) && !settled.has(1), "before the running searches reached their bound");

  const running = await Promise.all(searches.slice(0, SEARCH_RUNNING));
  for (const r of running) {
    t.equal(r.status, 503);
    t.match(r.body.message, new RegExp(`longer than ${SEARCH_STATEMENT_MS} ms`));
  }
  await lock.release();
  const rest = await Promise.all(searches);
  const statuses = rest.map((r) => r.status);
  t.ok(
    statuses.every((s) => s === 200 || s === 503),
    `statuses: ${statuses.join(",")}`,
  );
  t.ok(
    statuses.slice(SEARCH_RUNNING).some((s) => s === 200),
    "waiting searches run once the lock goes",
  );

  const ready = await call(node.url, "GET", "/readyz");
  t.equal(ready.status, 200, "a search past its bound does not open the Postgres circuit");
  const scrape = parseScrape(await node.svc.metrics.registry.metrics());
  t.ok(
    total(scrape, "flock_slow_requests_total", { route: "/v1/search/messages", cause: "database" }) >= SEARCH_RUNNING,
    "counted as slow requests",
  );
});
