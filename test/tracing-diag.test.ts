// OpenTelemetry's own complaints reach the node's log (runtime/tracing-sdk.ts): a collector that refuses the spans is
// said in the log, as a line of the `opentelemetry` part, instead of the export failing unseen. A real node process
// exports to a local HTTP server that answers every export 500, as a collector that rejects them does.
import { createServer } from "node:http";
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { deletePrefix, dropSchema } from "./helpers/node.ts";
import { startProcess } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";

t.test("an export the collector refuses is logged by the node", async (t) => {
  let refused = 0;
  const collector = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      refused++;
      res.writeHead(500, { "content-type": "text/plain" }).end("no");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  const { port } = collector.address() as { port: number };
  const schema = uniqueName("tdiag");
  const prefix = `flocktest:${uniqueName("tdiag")}:`;
  const node = await startProcess({
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    PG_SCHEMA: schema,
    REDIS_PREFIX: prefix,
    TRUST_PROXY: "1",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: "100",
  });
  t.teardown(async () => {
    await node.stop();
    await dropSchema(schema);
    await deletePrefix(prefix);
    await new Promise((r) => collector.close(r));
  });
  const a = await registerAgent(node.url, "a");
  const b = await registerAgent(node.url, "b");
  const sent = await call(node.url, "POST", "/v1/messages", { token: a.token, json: { to: b.id, body: "traced" } });
  t.equal(sent.status, 201);
  await until(() => refused > 0, { ms: 15_000, what: "an export to reach the collector" });
  const complaint = () =>
    node
      .output()
      .split("\n")
      // (a line still being written has no closing brace yet)
      .filter((l) => l.includes('"part":"opentelemetry"') && l.trimEnd().endsWith("}"))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
  await until(() => complaint().length > 0, {
    ms: 15_000,
    what: () => `an opentelemetry line in the log (exports refused: ${refused})`,
  });
  const first = complaint()[0]!;
  t.equal(first.level, 50, "said as an error");
  t.match(first.msg, /OTLPExporterError/, `it names the refused export: ${first.msg.slice(0, 120)}`);
  t.match(first.msg, /Internal Server Error|500/, "and the collector's answer");
});
