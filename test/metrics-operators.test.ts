// The metrics operators read, under real load: a node on Redis and Postgres gets direct and group sends over HTTP, a
// WebSocket that receives and acks, long polls (one left unacknowledged and polled again: a redelivery), and a client
// hammering registration past its limit (429s, then a ban). Its metrics listener is scraped, and every metric that
// deploy/grafana/flock.json and deploy/prometheus/alerts.yml name (read from their PromQL) must be in the scrape,
// with the counters moved as far as the load says, and the queue gauges empty once the load is answered.
import { readFileSync } from "node:fs";
import t from "tap";
import WebSocket from "ws";
import { call, randomIp, type Registered, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { parseScrape, total } from "./helpers/scrape.ts";
import { until } from "./helpers/wait.ts";

/** Prometheus' own series, not a node's (`up` is made by the scrape). */
const PROMETHEUS_SERIES = new Set(["up"]);
const PROMQL_WORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "le",
  "inf",
  "nan",
]);

/** Metric names a PromQL expression reads: identifiers outside label matchers, strings and ranges, not functions. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "");
  const out = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*(?=\s*(\(?))/g)) {
    const word = m[0];
    if (m[1] === "(" || PROMQL_WORDS.has(word.toLowerCase())) continue; // a function (rate, sum, histogram_quantile, ...)
    if (/^\d/.test(word)) continue;
    out.add(word);
  }
  return [...out];
}

/** Every PromQL expression of the alert rules (`expr:` on one line, or a `|` block below it). */
function alertExprs(yaml: string): string[] {
  const lines = yaml.split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)expr:\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    if (m[2] !== "|" && m[2] !== ">") {
      out.push(m[2]!);
      continue;
    }
    const body: string[] = [];
    while (
      i + 1 < lines.length &&
      (lines[i + 1]!.trim() === "" || /^\s*/.exec(lines[i + 1]!)![0].length > m[1]!.length)
    )
      body.push(lines[++i]!);
    out.push(body.join("\n"));
  }
  return out;
}

/** Every PromQL expression of the dashboard: its panels' targets and its variables' queries. */
function dashboardExprs(dash: any): string[] {
  const out: string[] = [];
  const panels = (ps: any[]): void => {
    for (const p of ps ?? []) {
      for (const target of p.targets ?? []) if (typeof target.expr === "string") out.push(target.expr);
      panels(p.panels);
    }
  };
  panels(dash.panels);
  for (const v of dash.templating?.list ?? []) {
    const q = typeof v.query === "string" ? v.query : v.query?.query;
    if (typeof q === "string") out.push(q.replace(/^label_values\(([^,)]*).*$/, "$1"));
  }
  return out;
}

t.test("metrics in the dashboard and the alert rules: the PromQL is read", async (t) => {
  t.same(
    metricNames(
      'sum by (le, route) (rate(flock_x_bucket{route=~"a|b(c)"}[5m])) / on(instance) flock_y > 0.5 and up == 0',
    ),
    ["flock_x_bucket", "flock_y", "up"],
  );
  t.same(metricNames("histogram_quantile(0.99, sum by (le) (rate(flock_z_bucket[$__rate_interval])))"), [
    "flock_z_bucket",
  ]);
});

t.test(
  "a node under load exposes every metric the dashboard and the alerts use, counted as the load implies",
  async (t) => {
    const node = await startTestNode(t, { engine: "redis", env: { FLOCK_METRICS_PORT: "0", FLOCK_BAN_STRIKES: "2" } });
    const base = node.url;
    const scrape = async () => {
      const r = await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`);
      t.equal(r.status, 200);
      return parseScrape(await r.text());
    };

    const [alice, dave, bob, carol, eve] = await Promise.all(
      ["alice", "dave", "bob", "carol", "eve"].map((n) => registerAgent(base, n)),
    );
    const a = alice!,
      d = dave!,
      b = bob!,
      c = carol!,
      e = eve!;
    const group = await call(base, "POST", "/v1/groups", {
      token: a.token,
      json: { name: "ops", members: [b.id, c.id] },
    });
    t.equal(group.status, 201);
    const groupId: string = group.body.group.id;

    // bob on a WebSocket, acking every message it gets
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/v1/ws`, [`bearer.${b.token}`]);
    t.teardown(() => ws.close());
    const wsGot = new Set<string>();
    const wsAcked = new Set<string>();
    ws.on("message", (raw) => {
      const f = JSON.parse(String(raw));
      if (f.type === "message") {
        wsGot.add(f.message.id);
        ws.send(JSON.stringify({ type: "ack", id: f.message.id, ref: f.message.id }));
      } else if (f.type === "ack") wsAcked.add(f.id);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("message", () => resolve());
      ws.once("error", reject);
    });

    // eve long polls with nothing to get: in progress while the node is scraped
    const eveWaits = call(base, "GET", "/v1/messages/pending?timeout=5", { token: e.token });
    await until(async () => total(await scrape(), "flock_connections", { transport: "long_poll" }) >= 1, {
      what: "eve's long poll counted",
      every: 20,
    });
    const during = await scrape();
    t.ok(total(during, "flock_connections", { transport: "websocket" }) >= 1, "bob's WebSocket is counted open");
    await until(async () => total(await scrape(), "flock_long_polls_waiting") >= 1, {
      what: "eve's long poll counted waiting for a message",
      every: 20,
    });

    // sends: direct from two senders (each under its 10/s limit), and to the group
    const direct = async (from: Registered, to: Registered, n: number) => {
      for (let i = 0; i < n; i++)
        t.equal(
          (await call(base, "POST", "/v1/messages", { token: from.token, json: { to: to.id, body: `m${i}` } })).status,
          201,
        );
    };
    await direct(a, b, 4);
    await direct(d, c, 4);
    await direct(d, e, 1);
    for (let i = 0; i < 3; i++) {
      t.equal(
        (await call(base, "POST", `/v1/groups/${groupId}/messages`, { token: a.token, json: { body: `g${i}` } }))
          .status,
        201,
      );
    }
    t.equal((await eveWaits).status, 200);

    // bob's socket gets 4 direct and 3 group messages, and its acks are confirmed
    await until(() => wsAcked.size >= 7, { what: `bob's 7 acks (got ${wsGot.size}, acked ${wsAcked.size})`, ms: 5000 });

    // carol long polls: one message handed out, not acked, handed out again (a redelivery), then everything acked
    const first = await call(base, "GET", "/v1/messages/pending?timeout=1&limit=1", { token: c.token });
    t.equal(first.body.messages.length, 1);
    const carolGot = new Set<string>();
    for (let round = 0; round < 20 && carolGot.size < 7; round++) {
      const r = await call(base, "GET", "/v1/messages/pending?timeout=1&limit=100", { token: c.token });
      for (const m of r.body.messages) {
        carolGot.add(m.id);
        t.equal((await call(base, "POST", `/v1/messages/${m.id}/ack`, { token: c.token })).status, 204);
      }
    }
    t.equal(carolGot.size, 7, "carol got her 4 direct and 3 group messages");

    // one client hammering registration: 10 answered, then 429s, then a ban (2 strikes)
    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push(
        (
          await call(base, "POST", "/v1/agents/register", {
            json: { display_name: "x" },
            headers: { "x-forwarded-for": ip },
          })
        ).status,
      );
    }
    t.ok(statuses.includes(429), `a 429 from the registration limit (${statuses.join(",")})`);
    t.ok(statuses.includes(403), "then the ban");

    const s = await scrape();
    const used = new Map<string, string>();
    for (const expr of alertExprs(readFileSync("deploy/prometheus/alerts.yml", "utf8")))
      for (const n of metricNames(expr)) used.set(n, "deploy/prometheus/alerts.yml");
    const dash = JSON.parse(readFileSync("deploy/grafana/flock.json", "utf8"));
    for (const expr of dashboardExprs(dash))
      for (const n of metricNames(expr)) used.set(n, "deploy/grafana/flock.json");
    t.ok(used.size >= 20, `the dashboard and the rules name metrics (${used.size})`);
    for (const [name, where] of used) {
      if (PROMETHEUS_SERIES.has(name)) continue;
      t.ok(s.has(name), `${name} (${where}) is in the scrape`);
    }

    // the counters moved as the load implies
    t.ok(total(s, "flock_messages_sent_total", { kind: "direct" }) >= 9, "9 direct sends");
    t.ok(total(s, "flock_messages_sent_total", { kind: "group" }) >= 3, "3 group sends");
    t.ok(total(s, "flock_messages_delivered_total", { transport: "websocket" }) >= 7, "7 delivered on bob's socket");
    t.ok(
      total(s, "flock_messages_delivered_total", { transport: "long_poll" }) >= 8,
      "carol's 7 and eve's 1 by long poll (one of carol's twice)",
    );
    t.ok(
      total(s, "flock_messages_redelivered_total", { transport: "long_poll" }) >= 1,
      "carol's unacknowledged message, handed out again",
    );
    t.ok(total(s, "flock_message_acks_total") >= 14, "bob's 7 acks and carol's 7");
    t.ok(total(s, "flock_send_batch_messages_count", { kind: "direct" }) >= 1, "direct send batches observed");
    t.ok(total(s, "flock_send_batch_messages_sum", { kind: "direct" }) >= 9, "holding every direct send");
    t.ok(total(s, "flock_send_commit_duration_seconds_count", { kind: "group" }) >= 1, "group commits timed");
    t.ok(
      total(s, "flock_postgres_statement_duration_seconds_count", { statement: "ack" }) >= 1,
      "ack statements timed",
    );
    t.ok(
      total(s, "flock_redis_command_duration_seconds_count", { command: "stream_append" }) >= 12,
      "every send's stream append timed",
    );
    t.ok(
      total(s, "flock_redis_command_duration_seconds_count", { command: "rate_limit" }) >= 12,
      "the limiter's takes timed",
    );
    t.ok(total(s, "flock_rate_limit_refusals_total", { policy: "register" }) >= 1, "the registration refusals");
    t.ok(total(s, "flock_ip_bans_total") >= 1, "the ban");
    t.ok(total(s, "flock_ip_ban_refusals_total") >= 1, "requests refused while banned");
    t.equal(total(s, "flock_circuit_open", { backend: "postgres" }), 0, "Postgres' circuit is closed");
    t.equal(total(s, "flock_circuit_open", { backend: "redis" }), 0, "Redis' circuit is closed");
    t.equal(total(s, "flock_connections", { transport: "long_poll" }), 0, "no long poll in progress now");
    // the queues, with the load answered: empty (test/queue-depths.test.ts makes them fill)
    for (const q of [
      "flock_send_queue_depth",
      "flock_ack_queue_depth",
      "flock_long_polls_waiting",
      "flock_postgres_pool_waiting",
      "flock_ack_retries_pending",
      "flock_redelivery_backoff_members",
      "flock_cursor_copies_held",
    ]) {
      t.equal(total(s, q), 0, `${q} is 0`);
    }
    t.equal(
      total(s, "flock_postgres_pool_connections"),
      node.config.PG_POOL,
      "every connection of the pool is counted, in one state",
    );
    t.ok(total(s, "flock_http_requests_total", { route: "/v1/messages", method: "POST", status: "201" }) >= 9);
    t.ok(s.has("flock_nodejs_eventloop_lag_p99_seconds"), "the event loop's lag");
  },
);
