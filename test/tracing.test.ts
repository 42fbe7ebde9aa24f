// Tracing (issue 37, docs/OPERATIONS.md "Tracing"): two real Flock processes export to a local OTLP/HTTP receiver (a
// node:http server taking the exporter's JSON on POST /v1/traces, the protocol as it is). Senders send direct and group
// messages through node A with plain fetch; the recipient holds a WebSocket on node B. Every send is one trace: its
// request and its commit on A, its delivery on B under them. A node without OTEL_EXPORTER_OTLP_ENDPOINT exports nothing.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";
import t from "tap";
import WebSocket from "ws";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { call, randomIp, type Registered, registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema } from "./helpers/node.ts";
import { type NodeProcess, startProcess } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";

type Value = string | number | boolean;

/** A span as received, flattened: its resource's instance and service, its own attributes. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  instance: string;
  service: string;
  attributes: Record<string, Value>;
}

// SpanKind in OTLP
const SERVER = 2;
const CONSUMER = 5;

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
      }[];
    }[];
  }[];
}

function flat(attributes: OtlpAttribute[] = []): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const { key, value } of attributes) {
    const v =
      value.stringValue ??
      value.boolValue ??
      value.doubleValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue));
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** A local OTLP/HTTP receiver: every request counted, every span of a JSON export to /v1/traces kept. */
class Receiver {
  requests = 0;
  readonly spans: ReceivedSpan[] = [];
  readonly problems: string[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    const r = new Receiver(server);
    server.on("request", (req, res) => {
      r.requests++;
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          if (req.method !== "POST" || req.url !== "/v1/traces") throw new Error(`${req.method} ${req.url}`);
          if (!(req.headers["content-type"] ?? "").startsWith("application/json"))
            throw new Error(`content-type ${req.headers["content-type"]}`);
          let body = Buffer.concat(chunks);
          if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
          r.take(JSON.parse(body.toString("utf8")) as OtlpRequest);
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } catch (err) {
          r.problems.push((err as Error).message);
          res.writeHead(400, { "content-type": "application/json" }).end("{}");
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return r;
  }

  get url(): string {
    const a = this.server.address();
    if (a === null || typeof a === "string") throw new Error("not listening");
    return `http://127.0.0.1:${a.port}`;
  }

  private take(req: OtlpRequest): void {
    for (const rs of req.resourceSpans ?? []) {
      const resource = flat(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind,
            instance: String(resource["service.instance.id"] ?? ""),
            service: String(resource["service.name"] ?? ""),
            attributes: flat(s.attributes),
          });
        }
      }
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The instance id a node says it exports spans as (its "tracing:" log line). */
function instanceOf(node: NodeProcess): string | undefined {
  for (const line of node.output().split("\n")) {
    if (!line.startsWith("{")) continue;
    const l = JSON.parse(line) as { msg?: string; instance?: string };
    if (l.msg?.startsWith("tracing:")) return l.instance;
  }
  return undefined;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

interface Sent {
  id: string;
  kind: "direct" | "group";
  /** The traceparent the client sent with it, if any: the trace is the caller's then. */
  given?: { traceId: string; spanId: string };
}

async function send(
  url: string,
  from: Registered,
  kind: "direct" | "group",
  to: string,
  body: string,
  traced: boolean,
): Promise<Sent> {
  const given = traced ? { traceId: hex(16), spanId: hex(8) } : undefined;
  const headers: Record<string, string> = given ? { traceparent: `00-${given.traceId}-${given.spanId}-01` } : {};
  const r =
    kind === "direct"
      ? await call<{ id: string }>(url, "POST", "/v1/messages", { token: from.token, json: { to, body }, headers })
      : await call<{ id: string }>(url, "POST", `/v1/groups/${to}/messages`, {
          token: from.token,
          json: { body },
          headers,
        });
  if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
  return { id: r.body.id, kind, ...(given ? { given } : {}) };
}

/** A socket on `url` for `who`, collecting the ids of the messages it is delivered. */
async function listen(t: { teardown(fn: () => void): void }, url: string, who: Registered): Promise<Set<string>> {
  const ws = new WebSocket(`${url.replace("http", "ws")}/v1/ws`, { headers: { authorization: `Bearer ${who.token}` } });
  const got = new Set<string>();
  let ready = false;
  ws.on("message", (data: Buffer) => {
    const f = JSON.parse(data.toString()) as { type: string; message?: { id: string } };
    if (f.type === "ready") ready = true;
    if (f.type === "message" && f.message) got.add(f.message.id);
  });
  t.teardown(() => ws.close(1000));
  await until(() => ready, { ms: 10_000, what: "the socket's ready frame" });
  return got;
}

t.test("one trace per send, from the request on node A through the commit to the delivery on node B", async (t) => {
  const schema = uniqueName("trace");
  const prefix = `flocktest:${uniqueName("trace")}:`;
  const receiver = await Receiver.start();
  const quiet = await Receiver.start();
  const shared = {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    TRUST_PROXY: "1",
  };
  const traced = { ...shared, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100" };
  const nodes: NodeProcess[] = [];
  t.teardown(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await dropSchema(schema);
    await deletePrefix(prefix);
    await receiver.close();
    await quiet.close();
  });
  const a = await startProcess(traced);
  nodes.push(a);
  const b = await startProcess(traced);
  nodes.push(b);
  const instanceA = instanceOf(a);
  const instanceB = instanceOf(b);
  t.ok(instanceA && instanceB && instanceA !== instanceB, `each node names itself (${instanceA}, ${instanceB})`);

  // four senders on A; the recipient's socket on B
  const senders = await Promise.all([1, 2, 3, 4].map((i) => registerAgent(a.url, `sender-${i}`)));
  const recipient = await registerAgent(a.url, "recipient");
  const group = await call<{ group: { id: string } }>(a.url, "POST", "/v1/groups", {
    token: senders[0]!.token,
    json: { name: "traced", members: [...senders.slice(1).map((s) => s.id), recipient.id] },
    headers: { "x-forwarded-for": randomIp() },
  });
  t.equal(group.status, 201, "the group is made");
  const delivered = await listen(t, b.url, recipient);

  // 16 sends at once (so they share batches): each sender 2 direct and 2 group, every other one with the caller's traceparent
  const sends = await Promise.all(
    senders.flatMap((s, i) =>
      [0, 1, 2, 3].map((j) => {
        const kind = j % 2 === 0 ? "direct" : "group";
        return send(
          a.url,
          s,
          kind,
          kind === "direct" ? recipient.id : group.body.group.id,
          `m${i}.${j}`,
          (i + j) % 2 === 0,
        );
      }),
    ),
  );
  await until(() => sends.every((s) => delivered.has(s.id)), {
    ms: 10_000,
    what: () => `every send on B's socket (${delivered.size} of ${sends.length})`,
  });

  // the spans of a send: every span naming its message, and every span of their traces
  const named = (s: Sent) => receiver.spans.filter((x) => x.attributes["flock.message.id"] === s.id);
  const traceOf = (traceId: string) => receiver.spans.filter((x) => x.traceId === traceId);
  const complete = (s: Sent) => {
    const ids = new Set(named(s).map((x) => x.traceId));
    if (ids.size !== 1) return false;
    const spans = traceOf([...ids][0]!);
    return ["POST", "commit", "publish", "deliver"].every((n) =>
      spans.some((x) => x.name.startsWith(n) && (n !== "deliver" || x.instance === instanceB)),
    );
  };
  await until(() => sends.every(complete), {
    ms: 15_000,
    every: 50,
    what: () =>
      `the spans of every send (${sends.filter(complete).length} of ${sends.length} complete; ${receiver.spans.length} spans)`,
  });
  t.same(receiver.problems, [], "every export was JSON to /v1/traces");

  const traceIds = new Set<string>();
  for (const s of sends) {
    const ids = new Set(named(s).map((x) => x.traceId));
    t.equal(ids.size, 1, `${s.kind} ${s.id}: every span naming it is in one trace`);
    const traceId = [...ids][0]!;
    t.notOk(traceIds.has(traceId), `${s.id}: its trace is no other send's`);
    traceIds.add(traceId);
    const spans = traceOf(traceId);
    t.same(
      spans.filter((x) => x.attributes["flock.message.id"] !== s.id).map((x) => x.name),
      [],
      `${s.id}: no span of its trace names another message`,
    );
    t.ok(
      spans.every((x) => x.service === "flock"),
      `${s.id}: service.name flock`,
    );

    const requests = spans.filter((x) => x.kind === SERVER);
    t.equal(requests.length, 1, `${s.id}: one request span`);
    const request = requests[0]!;
    t.equal(request.instance, instanceA, `${s.id}: the request on A`);
    t.equal(
      request.name,
      s.kind === "direct" ? "POST /v1/messages" : "POST /v1/groups/:id/messages",
      `${s.id}: named by its route`,
    );
    t.equal(request.attributes["http.response.status_code"], 201, `${s.id}: answered 201`);
    if (s.given) {
      t.equal(traceId, s.given.traceId, `${s.id}: the caller's trace`);
      t.equal(request.parentSpanId, s.given.spanId, `${s.id}: the request under the caller's span`);
    } else t.equal(request.parentSpanId, "", `${s.id}: the request is the trace's root`);

    const commits = spans.filter((x) => x.name === "commit");
    t.equal(commits.length, 1, `${s.id}: one commit span`);
    t.equal(commits[0]!.parentSpanId, request.spanId, `${s.id}: the commit under the request`);
    t.equal(commits[0]!.attributes["flock.send.kind"], s.kind, `${s.id}: the commit of a ${s.kind} batch`);
    // the batch's size: a whole number, at least this send, at most every send of its kind (the only sends on A then)
    const size = commits[0]!.attributes["flock.batch.size"];
    const ofKind = sends.filter((x) => x.kind === s.kind).length;
    t.ok(
      typeof size === "number" && Number.isInteger(size) && size >= 1 && size <= ofKind,
      `${s.id}: flock.batch.size ${size}, from 1 to the ${ofKind} ${s.kind} sends`,
    );

    const byId = new Map(spans.map((x) => [x.spanId, x]));
    const reaches = (x: ReceivedSpan) => {
      for (let at: ReceivedSpan | undefined = x; at !== undefined; at = byId.get(at.parentSpanId))
        if (at === request) return true;
      return false;
    };
    const onB = spans.filter((x) => x.name === "deliver" && x.instance === instanceB);
    t.equal(onB.length, 1, `${s.id}: one delivery on B`);
    t.equal(onB[0]!.kind, CONSUMER, `${s.id}: B's delivery consumes what A published`);
    t.equal(onB[0]!.attributes["flock.delivery.sockets"], 1, `${s.id}: to the one socket`);
    t.ok(reaches(onB[0]!), `${s.id}: B's delivery's parents lead to the request`);
    t.ok(
      spans.every((x) => x === request || reaches(x)),
      `${s.id}: every span of the trace hangs under the request`,
    );
  }
  t.equal(traceIds.size, sends.length, `${sends.length} sends, ${traceIds.size} traces`);
  const batches = receiver.spans
    .filter((x) => x.name === "commit")
    .map((x) => Number(x.attributes["flock.batch.size"]));
  t.comment(`commit batch sizes: ${batches.join(" ")}`);
  // a batch of k of these sends gives k commit spans (one in each send's trace), each saying k: so of a kind, the
  // spans saying k are a multiple of k
  for (const kind of ["direct", "group"] as const) {
    const ids = new Set(sends.filter((s) => s.kind === kind).map((s) => s.id));
    const sizes = receiver.spans
      .filter((x) => x.name === "commit" && ids.has(String(x.attributes["flock.message.id"])))
      .map((x) => Number(x.attributes["flock.batch.size"]));
    const spansSaying = new Map<number, number>();
    for (const k of sizes) spansSaying.set(k, (spansSaying.get(k) ?? 0) + 1);
    t.equal(sizes.length, ids.size, `${kind}: one commit span per send`);
    t.ok(
      [...spansSaying].every(([k, n]) => n % k === 0),
      `${kind}: the spans saying k come k to a batch (${[...spansSaying].map(([k, n]) => `${n} saying ${k}`).join(", ")})`,
    );
  }

  // a node that stops exports what it still holds: with a 10-minute batch delay, its spans can only come from the stop
  const holding = await startProcess({ ...traced, OTEL_BSP_SCHEDULE_DELAY: "600000" });
  nodes.push(holding);
  const last = await send(holding.url, senders[0]!, "direct", recipient.id, "the last", false);
  await until(() => delivered.has(last.id), { ms: 10_000, what: "the last send on B's socket" });
  const fromHolding = () =>
    receiver.spans.filter((x) => x.instance === instanceOf(holding) && x.attributes["flock.message.id"] === last.id);
  t.same(fromHolding(), [], "its spans wait in the batch");
  t.equal(await holding.stop(), 0, "the node stops cleanly");
  t.same(
    fromHolding()
      .map((x) => x.name)
      .sort(),
    ["POST /v1/messages", "commit", "publish stream.message"],
    "its spans were exported by the time it exited",
  );

  // a node without OTEL_EXPORTER_OTLP_ENDPOINT exports nothing, though every other OTEL_* variable names a receiver
  const off = await startProcess({
    ...shared,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${quiet.url}/v1/traces`,
    OTEL_BSP_SCHEDULE_DELAY: "100",
  });
  nodes.push(off);
  t.equal(instanceOf(off), undefined, "the node without it says nothing of tracing");
  const untraced = await Promise.all(senders.map((s) => send(off.url, s, "direct", recipient.id, "untraced", true)));
  await until(() => untraced.every((s) => delivered.has(s.id)), {
    ms: 10_000,
    what: "the untraced sends on B's socket",
  });
  // stopping is when an SDK would flush whatever it held: after the exit, a receiver that got nothing got nothing
  t.equal(await off.stop(), 0, "the untraced node stops cleanly");
  // What must not come has no condition to wait on, so wait for what must come after it: a send through A now, whose
  // delivery B exports. B's exporter sends its spans in the order they ended, one export at a time, each only once the
  // receiver has taken and answered the one before; a delivery span for an untraced send would have ended before this
  // one (B delivered those first), so once this one is in, any of theirs is in too. And whatever the untraced node
  // sent the quiet receiver before it exited has been read by this process in the many turns that took.
  const after = await send(a.url, senders[1]!, "direct", recipient.id, "after the untraced", false);
  const deliveredAfter = () =>
    receiver.spans.some(
      (x) => x.name === "deliver" && x.instance === instanceB && x.attributes["flock.message.id"] === after.id,
    );
  await until(deliveredAfter, {
    ms: 10_000,
    every: 20,
    what: () => `B's delivery span of the send after the untraced ones (${receiver.spans.length} spans)`,
  });
  t.equal(quiet.requests, 0, "the receiver named by the untraced node got no request");
  const ids = new Set(untraced.map((s) => s.id));
  t.same(
    receiver.spans.filter((x) => ids.has(String(x.attributes["flock.message.id"]))).map((x) => x.name),
    [],
    "no span for the untraced sends on B",
  );
});
