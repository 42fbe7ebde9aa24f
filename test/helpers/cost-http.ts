// The HTTP part of the adversarial-cost suite (test/cost-http.test.ts): a node's principals and resources to aim
// at, and the walk of every route (test/helpers/fuzz.ts's everyRoute): each path parameter, query field and body
// field (the route's zod schemas as JSON Schema) gets the long and hostile values of test/helpers/cost.ts, one
// request at a time, each measured.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { loadConfig } from "../../runtime/config.ts";
import type { Route } from "../../runtime/http/route.ts";
import { createLogger } from "../../runtime/log.ts";
import { startNode } from "../../runtime/server.ts";
import {
  arrayLadder,
  badAnswer,
  BODY_CAP,
  climb,
  type Family,
  FAMILIES,
  familiesFor,
  type JsonSchema,
  Ledger,
  longQueries,
  Meter,
  objectLadder,
  pathName,
  REQUEST_TIMEOUT_MS,
  sampleOf,
  slotsOf,
  stringLadders,
  toJson,
  URL_LADDER,
  type Variant,
  withValue,
} from "./cost.ts";
import { everyRoute } from "./fuzz.ts";
import { call, randomIp, type Registered, registerAgent } from "./http.ts";
import { signInWithWallet } from "./humans.ts";
import { startTestNode } from "./node.ts";
import { grantModerator } from "../../runtime/moderation/moderation-store.ts";
import { befriend, keptPending, post } from "./social.ts";

interface Teardown {
  teardown(fn: () => Promise<void> | void): void;
}

/** Rate limits scaled out of the way (as test/fuzz.test.ts does): the suite measures cost, not limits. */
const ENV = { FLOCK_LIMITS_SCALE: "1000000" };

export type Mode = "servers" | "embedded";

/** A node in `mode`: real Postgres and Redis ("servers"), or PGlite and the memory engines ("embedded", npm start's default). */
export async function startCostNode(
  t: Teardown,
  mode: Mode,
): Promise<{ url: string; grantModerator(id: string): Promise<boolean> }> {
  if (mode === "servers") {
    const node = await startTestNode(t, { engine: "redis", env: ENV });
    return { url: node.url, grantModerator: (id) => grantModerator(node.svc.sql, id) };
  }
  const dir = mkdtempSync(join(tmpdir(), "flock-cost-"));
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dir,
    LOG_LEVEL: "silent",
    TRUST_PROXY: "1",
    FLOCK_SHUTDOWN_GRACE: "2",
    ...ENV,
  });
  const node = await startNode(config, createLogger("silent"));
  t.teardown(async () => {
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { url: `http://127.0.0.1:${node.port}`, grantModerator: (id) => grantModerator(node.svc.sql, id) };
}

/** What the requests act as and aim at: principals with a message each kept pending, and resources they can see. */
export interface World {
  base: string;
  peer: Registered;
  agent: Registered;
  human: Registered;
  moment: string;
  comment: string;
  group: string;
  groupThread: string;
  dm: { id: string; thread_id: string };
  freq: string;
  file: string;
  /** A new agent (with a message waiting), for when the fuzzed one's account is deleted. */
  newAgent(): Promise<Registered>;
  /** A moderator, who walks the moderation routes (anyone else meets their 404 before any input is read). */
  moderator?: Registered;
  /** An agent the moderation routes may suspend. */
  victim?: Registered;
}

export async function makeWorld(base: string): Promise<World> {
  const { peer, keep, newAgent } = await keptPending(base, "coster");
  const agent = await newAgent();
  const human = await signInWithWallet(base);
  await befriend(base, peer, human);
  await keep(human);
  const moment = await post(base, agent, "public");
  const comment = await call(base, "POST", `/v1/moments/${moment.id}/comments`, {
    token: peer.token,
    json: { body: "c" },
  });
  const group = await call(base, "POST", "/v1/groups", { token: agent.token, json: { name: "g", members: [peer.id] } });
  const dm = await keep(agent);
  const other = await registerAgent(base, "other");
  const freq = await call(base, "POST", "/v1/friends/request", { token: other.token, json: { to: agent.id } });
  const file = await call(base, "POST", "/v1/files/upload?name=f.txt", {
    token: agent.token,
    body: "file body",
    headers: { "content-type": "text/plain" },
  });
  for (const r of [comment, group, freq, file])
    if (r.status >= 300) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return {
    base,
    peer,
    agent,
    human,
    moment: moment.id,
    comment: String(comment.body.id),
    group: String(group.body.group.id),
    groupThread: String(group.body.group.thread_id),
    dm,
    freq: String(freq.body.request.id),
    file: String(file.body.id),
    newAgent,
  };
}

/** Values for fields a valid request needs context for, by field name (`x[]`: an item of array field x). */
function hintsFor(w: World, route: Route): Record<string, unknown> {
  const h: Record<string, unknown> = {
    to: w.peer.id,
    body: "hello",
    content: "hi",
    thread_id: w.dm.thread_id,
    members: [w.peer.id],
    "members[]": w.peer.id,
    member: w.peer.id,
    "attachments[]": w.file,
    emoji: "👍",
    display_name: "x",
    name: "g",
    q: "x",
    timeout: 0,
    through: w.dm.id,
    "principals[]": w.victim?.id ?? w.peer.id,
  };
  if (route.path === "/v1/files/upload") h["name"] = "f.txt";
  if (route.path === "/v1/messages/:id/ack") h["through"] = "false";
  return h;
}

/** A valid value for each path parameter, by the segment before it. */
function paramValue(w: World, path: string, param: string): string {
  const segs = path.split("/");
  const before = segs[segs.indexOf(param) - 1];
  if (param === ":member") return w.peer.id;
  if (param === ":emoji") return encodeURIComponent("👍");
  switch (before) {
    case "agents":
    case "friends":
      return w.peer.id;
    case "moments":
      return w.moment;
    case "messages":
      return w.dm.id;
    case "threads":
      return w.dm.thread_id;
    case "groups":
      return w.group;
    case "requests":
      return w.freq;
    case "files":
      return w.file;
    default:
      return "x";
  }
}

/** JSON Schema of a route's body or query as a client sends it. */
const jsonSchema = (s: z.ZodType): JsonSchema =>
  z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as JsonSchema;

/** Raw text for a query value of `family`, about `chars` characters once percent-encoded. */
function queryValueOf(f: Family, chars: number): string {
  const n = Math.max(1, Math.floor((chars - encodeURIComponent(f.lead).length) / encodeURIComponent(f.unit).length));
  return f.lead + f.unit.repeat(n);
}

interface Req {
  path: string;
  query: string;
  body?: Buffer;
  type?: string;
  headers?: Record<string, string>;
}

export interface WalkOptions {
  /** String families per field (test/helpers/cost.ts's familiesFor; all six unless told). */
  perField?: number;
  /** Only these routes (METHOD path) get their fields walked; every route still gets the long query strings. */
  fieldsOf?: (route: Route) => boolean;
}

/** Routes that end the principal's account or token: walked last. */
const LAST = ["DELETE /v1/users/me", "POST /v1/agents/me/token"];
const order = (r: Route) => (LAST.includes(`${r.method} ${r.path}`) ? 2 : r.method === "DELETE" ? 1 : 0);

/** Walks every route; returns the routes walked. */
export async function walkRoutes(w: World, meter: Meter, ledger: Ledger, opts: WalkOptions = {}): Promise<Route[]> {
  let fields = 0;
  const pick = () => familiesFor(fields++, opts.perField ?? FAMILIES.length);
  const routes = everyRoute().sort((a, b) => order(a) - order(b));
  const who = { agent: w.agent, human: w.human as Registered, moderator: w.moderator ?? w.agent };

  for (const route of routes) {
    const label = `${route.method} ${route.path}`;
    const as =
      route.auth === "none"
        ? undefined
        : route.auth === "human"
          ? "human"
          : route.path.startsWith("/v1/moderation/")
            ? "moderator"
            : "agent";
    const hints = hintsFor(w, route);
    const params = route.path.split("/").filter((s) => s.startsWith(":"));
    const filled = (over: Record<string, string> = {}) =>
      route.path.replace(/:[a-z_]+/g, (p) => over[p] ?? paramValue(w, route.path, p));
    const qSchema = route.query ? jsonSchema(route.query) : undefined;
    const bSchema = route.body ? jsonSchema(route.body) : undefined;
    const qBase = (qSchema ? sampleOf(qSchema, hints) : {}) as Record<string, unknown>;
    const bBase = bSchema ? sampleOf(bSchema, hints) : undefined;
    const qText = (q: Record<string, unknown>) =>
      new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
    const baseBody = route.stream
      ? Buffer.from("file body")
      : bBase !== undefined
        ? Buffer.from(toJson(bBase))
        : undefined;
    const baseType = route.stream ? "text/plain" : "application/json";
    const base: Req = { path: filled(), query: qText(qBase), body: baseBody, type: baseType };

    const send = async (what: string, r: Req): Promise<boolean> => {
      const headers: Record<string, string> = { "x-forwarded-for": randomIp(), ...r.headers };
      const token = as ? who[as].token : undefined;
      if (token && !headers["authorization"]) headers["authorization"] = `Bearer ${token}`;
      if (r.body !== undefined) headers["content-type"] = r.type ?? "application/json";
      if (route.path === "/v1/mcp") headers["accept"] = "application/json, text/event-stream";
      const url = `${w.base}${r.path}${r.query ? "?" + r.query : ""}`;
      const { value, cost } = await meter.measure(async () => {
        try {
          const res = await fetch(url, {
            method: route.method,
            headers,
            body: r.body ? new Uint8Array(r.body) : undefined,
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          });
          return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
        } catch (err) {
          return { status: 0, type: "", text: String(err) };
        }
      });
      const failure = value.status === 0 ? `no answer: ${value.text}` : badAnswer(value.status, value.type, value.text);
      const broke = ledger.add(label, `${what} → ${value.status}`, cost, failure);
      // a principal whose account a case deleted is replaced; a rotated token is taken up
      if (as === "agent" && token === who.agent.token) {
        if (value.status === 401 || (label === "DELETE /v1/users/me" && value.status === 204))
          who.agent = await w.newAgent();
        else if (label === "POST /v1/agents/me/token" && value.status === 200)
          who.agent = { ...who.agent, token: (JSON.parse(value.text) as { token: string }).token };
      }
      return broke;
    };

    // every route: long query strings (many parameters, one repeated)
    await climb(
      longQueries(Object.keys(qBase).length > 0 ? Object.keys(qBase) : ["a"]).map((v) => [v]),
      (v) => send(`query ${v.what}`, { ...base, query: String(v.value) }),
    );
    if (opts.fieldsOf && !opts.fieldsOf(route)) continue;

    // each path parameter: long encoded values of each family, the other parameters valid
    for (const p of params) {
      const ladders = pick().map((f) =>
        URL_LADDER.map((chars): Variant => ({
          what: `${f.name} ${chars} chars`,
          value: encodeURIComponent(queryValueOf(f, chars)),
        })),
      );
      await climb(ladders, (v) => send(`path ${p} ${v.what}`, { ...base, path: filled({ [p]: String(v.value) }) }));
    }

    // each query field: at and past its cap, then long values
    if (qSchema) {
      for (const slot of slotsOf(qSchema).filter((s) => s.kind === "string" && s.path.length === 1)) {
        const field = String(slot.path[0]);
        const caps = stringLadders(slot.schema, []);
        const families = pick();
        const ladders = FAMILIES.flatMap((f, i) =>
          families.includes(f)
            ? [
                [
                  ...caps[i]!,
                  ...URL_LADDER.map((chars): Variant => ({
                    what: `${f.name} ${chars} chars`,
                    value: queryValueOf(f, chars),
                  })),
                ],
              ]
            : [],
        );
        await climb(ladders, (v) =>
          send(`query ${field} ${v.what}`, { ...base, query: qText({ ...qBase, [field]: v.value }) }),
        );
      }
    }

    // each body field: strings, arrays and objects at and past their caps, up to the body cap
    if (bSchema && !route.stream) {
      const slots = slotsOf(bSchema);
      for (const slot of slots) {
        const at = pathName(slot.path);
        const body = (v: unknown) => Buffer.from(toJson(withValue(bBase, slot.path, v)));
        let ladders: Variant[][];
        if (slot.kind === "string") {
          const families = pick();
          ladders = stringLadders(slot.schema).filter((_, i) => families.includes(FAMILIES[i]!));
        } else if (slot.kind === "array") {
          const name = slot.path.filter((x): x is string => typeof x === "string").at(-1);
          const item = slot.schema.items
            ? sampleOf(
                slot.schema.items,
                { ...hints, ...(name && `${name}[]` in hints ? { [name]: hints[`${name}[]`] } : {}) },
                name,
              )
            : 1;
          ladders = [arrayLadder(slot.schema, item)];
        } else ladders = objectLadder().map((v) => [v]);
        await climb(ladders, (v) => send(`body ${at} ${v.what}`, { ...base, body: body(v.value) }));
      }
      // and one byte past the body cap
      await send(`body past the cap (${BODY_CAP + 1} B)`, { ...base, body: Buffer.alloc(BODY_CAP + 1, 0x20) });
    }
  }
  return routes;
}

/** Paths that match no route, ~45,000 characters of each family, and a long bearer token on an authenticated route. */
export async function walkEdges(
  w: World,
  meter: Meter,
  ledger: Ledger,
  families: readonly Family[] = FAMILIES,
): Promise<void> {
  // every family here: these are two targets, not one per route
  const send = async (target: string, what: string, path: string, headers: Record<string, string>) => {
    const { value, cost } = await meter.measure(async () => {
      try {
        const res = await fetch(w.base + path, {
          headers: { "x-forwarded-for": randomIp(), ...headers },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
      } catch (err) {
        return { status: 0, type: "", text: String(err) };
      }
    });
    return ledger.add(
      target,
      `${what} → ${value.status}`,
      cost,
      value.status === 0 ? `no answer: ${value.text}` : badAnswer(value.status, value.type, value.text),
    );
  };
  await climb(
    families.map((f) =>
      URL_LADDER.map((chars): Variant => ({
        what: `${f.name} ${chars} chars`,
        value: encodeURIComponent(queryValueOf(f, chars)),
      })),
    ),
    (v) => send("(no route)", `path /v1/${v.what}`, `/v1/${String(v.value)}`, {}),
  );
  await climb(
    families.map((f) =>
      [1_000, 8_000, 40_000].map((chars): Variant => ({
        what: `${f.name} ${chars} chars`,
        value: encodeURIComponent(queryValueOf(f, chars)),
      })),
    ),
    (v) =>
      send("Authorization header", `GET /v1/agents/me bearer ${v.what}`, "/v1/agents/me", {
        authorization: `Bearer ${String(v.value)}`,
      }),
  );
}

/**
 * The libraries a node imports where first needed (test/unit/lazy-modules.test.ts: kept out of an idle node's memory),
 * imported before the walk: their one import, 150-250 ms under the TypeScript loader on a loaded machine, is paid
 * once per process by the first passkey, wallet or MCP request, whatever its input, and is not what this suite
 * measures (the node runs in this process, so it finds them loaded).
 */
async function warmLibraries(): Promise<void> {
  await Promise.all([
    import("@simplewebauthn/server"),
    import("@simplewebauthn/server/helpers"),
    import("viem"),
    import("viem/siwe"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@flock/client/mcp"),
    import("@x402/core/http"),
  ]);
}

/** The part of a tap test walkHttp uses. */
interface Tap extends Teardown {
  test(name: string, fn: (t: Tap) => Promise<void>): unknown;
  ok(v: unknown, msg: string): void;
  same(a: unknown, b: unknown, msg: string): void;
  comment(msg: string): void;
}

/** The HTTP suite in one mode: every route walked (`perField` string families per field), then its verdicts and figures. */
export function walkHttp(tap: Tap, mode: Mode, perField: number): void {
  tap.test(`every route's inputs have a bounded cost (${mode})`, async (t) => {
    const started = performance.now();
    const node = await startCostNode(t, mode);
    const world = await makeWorld(node.url);
    world.moderator = await registerAgent(node.url, "cost moderator");
    world.victim = await registerAgent(node.url, "cost victim");
    if (!(await node.grantModerator(world.moderator.id))) throw new Error("setup failed: no moderator");
    await warmLibraries();
    const meter = await Meter.start(t, `${node.url}/healthz`);
    const ledger = new Ledger();
    const routes = await walkRoutes(world, meter, ledger, { perField });
    await walkEdges(world, meter, ledger, FAMILIES.slice(0, Math.max(2, perField)));

    t.ok(routes.length > 30, `${routes.length} routes walked`);
    for (const route of routes) {
      const label = `${route.method} ${route.path}`;
      t.same(
        ledger.failures(label),
        [],
        `${label}: ${ledger.results.filter((r) => r.target === label).length} cases within the bounds`,
      );
    }
    for (const target of ["(no route)", "Authorization header"])
      t.same(ledger.failures(target), [], `${target}: within the bounds`);
    t.same(
      meter.bystander.failed,
      0,
      `the bystander's ${meter.bystander.polls} polls of /healthz were all answered 200`,
    );
    const max = ledger.max();
    t.comment(
      `${mode}: ${ledger.results.length} HTTP cases over ${ledger.targets().length} targets in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    t.comment(
      `${mode}: longest hold ${max.hold.toFixed(1)} ms on the CPU (${max.wall.toFixed(1)} ms on the wall clock), longest bystander wait ${max.bystander.toFixed(1)} ms, most heap growth ${max.heap.toFixed(1)} MB`,
    );
    t.comment(`${mode}: the 10 routes with the longest hold:\n  ${ledger.worst(10).join("\n  ")}`);
    t.comment(`${mode}: routes covered: ${routes.map((r) => `${r.method} ${r.path}`).join(", ")}`);
  });
}
