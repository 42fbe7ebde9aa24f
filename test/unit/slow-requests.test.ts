// The slow-request log (runtime/http/slow-requests.ts): a step over HELD_MS is logged once with its route and
// principal and counted; a step within it is neither; a statement past its bound is counted as "database".
import { Writable } from "node:stream";
import { pino } from "pino";
import t from "tap";
import { HELD_MS, PastBound, ranPastBound, SlowRequests } from "../../runtime/http/slow-requests.ts";
import { Metrics } from "../../runtime/metrics.ts";
import { parseScrape, total } from "../helpers/scrape.ts";

function logged() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: pino({ level: "info" }, sink) };
}

t.test("a step over the bound is logged once, with route and principal only, and counted", async (t) => {
  const { lines, log } = logged();
  const metrics = new Metrics();
  const slow = new SlowRequests(log, metrics);
  const req = {};
  slow.held(req, "/v1/messages/{id}/reactions", "123", "input", performance.now() - (HELD_MS + 30));
  slow.held(req, "/v1/messages/{id}/reactions", "123", "answer", performance.now() - (HELD_MS + 30));
  slow.database(req, "/v1/messages/{id}/reactions", "123");
  slow.held({}, "/v1/messages/{id}/reactions", "123", "input", performance.now() - 1);
  slow.database({}, "/v1/search/messages", "P9");
  await new Promise((r) => setImmediate(r));
  t.equal(
    lines.length,
    2,
    "the first slow step of the first request (once, for its three), and the statement of another; not the quick step",
  );
  t.match(lines[0], {
    level: 40,
    route: "/v1/messages/{id}/reactions",
    principal: "123",
    step: "input",
    msg: "slow request: held the event loop",
  });
  t.ok((lines[0]!["ms"] as number) >= HELD_MS + 30);
  t.same(
    Object.keys(lines[0]!).sort(),
    ["hostname", "level", "ms", "msg", "pid", "principal", "route", "step", "time"].sort(),
    "no body, query or token",
  );
  t.match(lines[1], {
    route: "/v1/search/messages",
    principal: "P9",
    msg: "slow request: a statement ran past its bound",
  });
  const scrape = parseScrape(await metrics.registry.metrics());
  t.equal(total(scrape, "flock_slow_requests_total", { route: "/v1/messages/{id}/reactions", cause: "event_loop" }), 1);
  t.equal(total(scrape, "flock_slow_requests_total", { route: "/v1/search/messages", cause: "database" }), 1);
});

t.test("what counts as past a bound", async (t) => {
  t.ok(ranPastBound(Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" })));
  t.ok(ranPastBound(new PastBound("unavailable", "x", {}, {})));
  t.notOk(ranPastBound(Object.assign(new Error("x"), { code: "23505" })));
  t.notOk(ranPastBound(null));
});
