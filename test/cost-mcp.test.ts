// The adversarial-cost suite over MCP (issue 50): the official MCP client connects to the node's /v1/mcp over
// streamable HTTP (as test/mcp-http.test.ts does) and every tool the node lists is called with each string, array
// and object argument of its input schema sent long and hostile values (test/helpers/cost.ts), up to the 1 MiB body
// cap, one call at a time while a bystander polls /healthz. A tool reaches the API through the node's own HTTP
// routes, so a call is measured until its answer: the tool's work and the API request it made. It fails on a hold
// or heap growth past the bounds, a call left unanswered, a JSON-RPC error other than "invalid params", and a tool
// error that is a 5xx. Both modes: on servers every tool, embedded the tools that reach the costliest checks (a
// call there goes through PGlite on the node's thread twice over: the tool's own request to the API), with one
// string family per field ("pictograph+ascii" and the others in turn) in both.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import t from "tap";
import {
  arrayLadder,
  badAnswer,
  BODY_CAP,
  climb,
  familiesFor,
  FAMILIES,
  type JsonSchema,
  Ledger,
  Meter,
  pathName,
  REQUEST_TIMEOUT_MS,
  sampleOf,
  slotsOf,
  stringLadders,
  type Variant,
  withValue,
} from "./helpers/cost.ts";
import { makeWorld, type Mode, startCostNode } from "./helpers/cost-http.ts";

// on a loaded machine (other tap jobs, other tests) the walk takes several times its CPU on the wall clock
t.setTimeout(300_000);

/** Objects as real values (the SDK serializes them): many keys, and nesting at and past the node's depth cap. */
function objects(): Variant[] {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));
  const deep = (d: number) => {
    let v: unknown = 1;
    for (let i = 0; i < d; i++) v = { a: v };
    return v;
  };
  return [
    { what: "1,000 keys", value: keys(1_000) },
    { what: "90,000 keys", value: keys(90_000) },
    { what: "nested 33 deep", value: deep(33) },
    { what: "nested 2,000 deep", value: deep(2_000) },
  ];
}

/** The tools walked in embedded mode: free text, ids in paths, the emoji, search. */
const EMBEDDED_TOOLS = [
  "whoami",
  "send_message",
  "comment",
  "react_to_message",
  "search_people",
  "search_messages",
  "read_thread",
];

for (const mode of ["servers", "embedded"] as const satisfies readonly Mode[]) {
  t.test(`every MCP tool's inputs have a bounded cost (${mode})`, async (t) => {
    const started = performance.now();
    const node = await startCostNode(t, mode);
    const w = await makeWorld(node.url);
    const transport = new StreamableHTTPClientTransport(new URL(`${node.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${w.agent.token}` } },
    });
    const client = new Client({ name: "cost-test", version: "1.0.0" });
    await client.connect(transport);
    t.teardown(() => client.close());
    const meter = await Meter.start(t, `${node.url}/healthz`);
    const ledger = new Ledger();
    const hints: Record<string, unknown> = {
      to: w.peer.id,
      body: "hello",
      content: "hi",
      visibility: "public",
      message_id: w.dm.id,
      "message_ids[]": w.dm.id,
      message_ids: [w.dm.id],
      thread_id: w.dm.thread_id,
      group_id: w.group,
      moment_id: w.moment,
      request_id: w.freq,
      through: w.dm.id,
      emoji: "👍",
      q: "x",
      display_name: "x",
      timeout_seconds: 1,
      ack_previous: false,
    };

    const listed = (await client.listTools()).tools;
    t.ok(listed.length > 20, `${listed.length} tools listed`);
    const tools = mode === "servers" ? listed : listed.filter((x) => EMBEDDED_TOOLS.includes(x.name));
    let fields = 0;
    for (const tool of tools) {
      const schema = tool.inputSchema as JsonSchema;
      const base = sampleOf(schema, hints) as Record<string, unknown>;
      // the fields with defaults are optional, so the sample leaves them out: wait_for_messages would then wait its
      // default 20 s (past REQUEST_TIMEOUT_MS) once an earlier call had taken what was pending
      for (const k of ["timeout_seconds", "ack_previous"])
        if (schema.properties && k in schema.properties) base[k] = hints[k as keyof typeof hints];
      const call = async (what: string, args: unknown): Promise<boolean> => {
        const { value, cost } = await meter.measure(async () => {
          try {
            const r = (await client.callTool(
              { name: tool.name, arguments: args as Record<string, unknown> },
              undefined,
              { timeout: REQUEST_TIMEOUT_MS },
            )) as CallToolResult;
            const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
            return {
              outcome: r.isError ? `tool error ${text.slice(0, 60)}` : "ok",
              failure: r.isError && /^5\d\d |internal/.test(text) ? `a server error: ${text.slice(0, 200)}` : undefined,
            };
          } catch (err) {
            if (err instanceof McpError && err.code === ErrorCode.InvalidParams)
              return { outcome: "invalid params", failure: undefined };
            // the node refused the POST itself (too deep, too large): the SDK throws with the node's answer
            const refused = /Error POSTing to endpoint: (\{.*\})$/s.exec(String(err))?.[1];
            if (refused) {
              const bad = badAnswer(400, "application/json", refused);
              const code = bad ? undefined : (JSON.parse(refused) as { error: string }).error;
              return {
                outcome: `refused ${code ?? "?"}`,
                failure:
                  bad ??
                  (code === "internal" || code === "unavailable" ? `refused ${refused.slice(0, 200)}` : undefined),
              };
            }
            return { outcome: "failed", failure: `no answer: ${String(err).slice(0, 200)}` };
          }
        });
        return ledger.add(tool.name, `${what} → ${value.outcome}`, cost, value.failure);
      };
      await call("base arguments", base);
      for (const slot of slotsOf(schema)) {
        const at = pathName(slot.path);
        let ladders: Variant[][];
        if (slot.kind === "string") {
          const families = familiesFor(fields++, 1);
          ladders = stringLadders(slot.schema).filter((_, i) => families.includes(FAMILIES[i]!));
        } else if (slot.kind === "array") {
          const name = slot.path.filter((x): x is string => typeof x === "string").at(-1);
          const item = slot.schema.items
            ? sampleOf(
                slot.schema.items,
                name && `${name}[]` in hints ? { ...hints, [name]: hints[`${name}[]`] } : hints,
                name,
              )
            : 1;
          ladders = [arrayLadder(slot.schema, item).filter((v) => JSON.stringify(v.value).length < BODY_CAP)];
        } else ladders = objects().map((v) => [v]);
        // the arguments' own object: the keys and the nesting come beside the valid arguments (a tool's defaults, such
        // as wait_for_messages' 20 s wait, must not replace them)
        const args = (v: Variant) =>
          slot.path.length === 0
            ? { ...base, ...(v.value as Record<string, unknown>) }
            : withValue(base, slot.path, v.value);
        await climb(ladders, (v) => call(`${at} ${v.what}`, args(v)));
      }
    }

    for (const tool of tools)
      t.same(
        ledger.failures(tool.name),
        [],
        `${tool.name}: ${ledger.results.filter((r) => r.target === tool.name).length} calls within the bounds`,
      );
    t.same(
      meter.bystander.failed,
      0,
      `the bystander's ${meter.bystander.polls} polls of /healthz were all answered 200`,
    );
    const max = ledger.max();
    t.comment(
      `${mode}: ${ledger.results.length} MCP calls over ${tools.length} tools in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    t.comment(
      `${mode}: longest hold ${max.hold.toFixed(1)} ms on the CPU (${max.wall.toFixed(1)} ms on the wall clock), longest bystander wait ${max.bystander.toFixed(1)} ms, most heap growth ${max.heap.toFixed(1)} MB`,
    );
    t.comment(`${mode}: the 10 tools with the longest hold:\n  ${ledger.worst(10).join("\n  ")}`);
    t.comment(`${mode}: tools covered: ${tools.map((x) => x.name).join(", ")}`);
  });
}
