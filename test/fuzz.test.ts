// Fuzzes every route over real HTTP against a running node: each route's body and query schemas get at least
// RUNS hostile inputs (test/helpers/fuzz.ts) from a fixed seed, with plausible and junk ids in its path, as an
// agent or a human where the route needs one. No answer may be a 5xx, none may take longer than a bounded
// time, and every answer that is not a 2xx is in the one error shape {"error","message"}.
import fc from "fast-check";
import t from "tap";
import type { Route } from "../runtime/http/route.ts";
import { bodyText, everyRoute, fieldNames, pathParam, queryText, routeSeed } from "./helpers/fuzz.ts";
import { call, randomIp, type Registered, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { befriend, keptPending, post } from "./helpers/social.ts";

const RUNS = Number(process.env["FLOCK_FUZZ_RUNS"] ?? 200);
/** Requests in flight at once per route. */
const CONCURRENCY = 8;
/** The longest any answer may take: a long poll waits at most 30 s, but every fuzzed principal has a message waiting. */
const REQUEST_TIMEOUT_MS = 10_000;

interface Case {
  path: string;
  query: string;
  body: string | undefined;
  as: "agent" | "human" | "none";
}

interface Failure {
  route: string;
  request: string;
  answer: string;
}

t.test("fuzz every route's body and query over HTTP", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "1000000" } });
  const base = node.url;

  // The principals the fuzz acts as, each with a message it never acks, so a long poll answers at once.
  const { peer, keep, newAgent } = await keptPending(base, "fuzzer");
  const newHuman = async (): Promise<Registered> => {
    const h = await signInWithWallet(base);
    await befriend(base, peer, h);
    await keep(h);
    return h;
  };
  const who: Record<"agent" | "human", Registered> = { agent: await newAgent(), human: await newHuman() };

  // Real ids for the path parameters: resources the fuzzed principals own or can see.
  const moment = await post(base, who.agent, "public");
  const comment = await call(base, "POST", `/v1/moments/${moment.id}/comments`, {
    token: peer.token,
    json: { body: "c" },
  });
  const group = await call(base, "POST", "/v1/groups", {
    token: who.agent.token,
    json: { name: "g", members: [peer.id] },
  });
  const dm = await keep(who.agent); // its id may be acked by the fuzz; the first kept message stays
  const other = await registerAgent(base, "other");
  const freq = await call(base, "POST", "/v1/friends/request", { token: other.token, json: { to: who.agent.id } });
  const file = await call(base, "POST", "/v1/files/upload?name=f.txt", {
    token: who.agent.token,
    body: "file body",
    headers: { "content-type": "text/plain" },
  });
  const pool = [
    who.agent.id,
    who.human.id,
    peer.id,
    other.id,
    moment.id,
    String(comment.body?.id ?? "comment_1"),
    String(group.body?.group?.id ?? "group_1"),
    String(group.body?.group?.thread_id ?? "thread_1"),
    dm.id,
    dm.thread_id,
    String(freq.body?.request?.id ?? "freq_1"),
    String(file.body?.id ?? "file_1"),
  ];

  /** A principal gone (its account deleted by the fuzz) is replaced; a rotated agent token is taken up. */
  let renewing: Promise<void> | undefined;
  const renew = (as: "agent" | "human", stale: string) => {
    if (who[as].token !== stale) return renewing;
    renewing ??= (as === "agent" ? newAgent() : newHuman()).then((p) => {
      who[as] = p;
      renewing = undefined;
    });
    return renewing;
  };

  const failures: Failure[] = [];
  const check = (route: Route, c: Case, status: number, type: string, text: string) => {
    const label = `${route.method} ${route.path}`;
    const request = `${route.method} ${c.path}${c.query ? "?" + c.query : ""} as ${c.as}${c.body !== undefined ? " " + c.body.slice(0, 300) : ""}`;
    const bad = (why: string) =>
      failures.push({ route: label, request, answer: `${status} ${why} ${text.slice(0, 300)}` });
    if (status >= 500) return bad("server error");
    if (status < 400) return;
    if (!type.includes("application/json")) return bad("not JSON");
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return bad("unparseable");
    }
    const b = body as { error?: unknown; message?: unknown } | null;
    if (!b || typeof b.error !== "string" || typeof b.message !== "string") bad("not the error shape");
  };

  const send = async (route: Route, c: Case) => {
    const headers: Record<string, string> = { "x-forwarded-for": randomIp() };
    const token = c.as === "none" ? undefined : who[c.as].token;
    if (token) headers["authorization"] = `Bearer ${token}`;
    if (c.body !== undefined) headers["content-type"] = "application/json";
    let r: Response;
    try {
      r = await fetch(`${base}${c.path}${c.query ? "?" + c.query : ""}`, {
        method: route.method,
        headers,
        body: c.body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      failures.push({
        route: `${route.method} ${route.path}`,
        request: `${route.method} ${c.path}?${c.query}`,
        answer: `no answer: ${String(err)}`,
      });
      return;
    }
    const text = await r.text();
    check(route, c, r.status, r.headers.get("content-type") ?? "", text);
    if (token && c.as !== "none") {
      if (r.status === 401) await renew(c.as, token);
      else if (r.ok && route.path === "/v1/agents/me/token")
        who.agent = { ...who.agent, token: (JSON.parse(text) as { token: string }).token };
    }
  };

  const routes = everyRoute();
  t.ok(routes.length > 30, `${routes.length} routes`);
  for (const route of routes) {
    const params = route.path.split("/").filter((s) => s.startsWith(":"));
    const bodyFields = fieldNames(route.body);
    const queryFields = fieldNames(route.query);
    const as: fc.Arbitrary<Case["as"]> =
      route.auth === "none"
        ? fc.constant("none")
        : route.auth === "principal"
          ? fc.constantFrom("agent", "human")
          : fc.constant(route.auth);
    const arb: fc.Arbitrary<Case> = fc
      .tuple(
        fc.tuple(...params.map(() => pathParam(pool))),
        queryText(queryFields, pool),
        route.body || route.stream ? bodyText(bodyFields, pool) : fc.constant(undefined),
        as,
      )
      .map(([values, query, body, as]) => {
        let i = 0;
        const path = route.path.replace(/:[a-z_]+/g, () => values[i++]!);
        return { path, query, body, as };
      });
    const cases = fc.sample(arb, { seed: routeSeed(route), numRuns: RUNS });
    const before = failures.length;
    let next = 0;
    const worker = async () => {
      while (next < cases.length) await send(route, cases[next++]!);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    t.equal(
      failures.length - before,
      0,
      `${route.method} ${route.path}: ${cases.length} cases, no 5xx, no hang, every error in the shape`,
    );
  }
  t.same(failures.slice(0, 20), [], "the first failures, if any");
});
