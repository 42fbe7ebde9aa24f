// What a node loads at start (bench/RESULTS.md, "Idle memory (issue 30)"): the modules of runtime/server.ts, which
// imports every part of a node and every handler, and not those it imports where first needed: viem (wallet
// sign-in), @simplewebauthn/server (the first passkey ceremony), the MCP SDK (the first MCP request), @x402/core (the first paid send, or a configured facilitator),
// PGlite (the embedded mode) and the OpenTelemetry SDK (tracing on: runtime/tracing.ts), which a node that uses none of
// them held for nothing (the figures are in RESULTS).
import { spawnSync } from "node:child_process";
import t from "tap";

const LAZY = [
  "viem",
  "ox",
  "@modelcontextprotocol/sdk",
  "@x402/core",
  "@electric-sql/pglite",
  "@electric-sql/pglite-socket",
  "@simplewebauthn/server",
  "@opentelemetry/sdk-node",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/semantic-conventions",
];

t.test("importing the server loads none of the modules it loads on first use", async (t) => {
  // every script V8 compiles while runtime/server.ts is imported, as the inspector reports them
  const code = `
    import { Session } from "node:inspector";
    const s = new Session();
    s.connect();
    const urls = [];
    s.on("Debugger.scriptParsed", (m) => urls.push(m.params.url));
    s.post("Debugger.enable");
    await import(${JSON.stringify(new URL("../../runtime/server.ts", import.meta.url).href)});
    s.disconnect();
    process.stdout.write(JSON.stringify(urls));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { encoding: "utf8" });
  t.equal(r.status, 0, r.stderr);
  const urls = JSON.parse(r.stdout) as string[];
  const packages = new Set(
    urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p) => p !== undefined),
  );
  t.ok(
    urls.some((u) => u.endsWith("/runtime/node.ts")),
    "the node's parts were loaded",
  );
  t.ok(packages.has("zod") && packages.has("postgres"), "and the modules every node uses");
  for (const p of LAZY) t.notOk(packages.has(p), `${p} is not loaded at start`);
});
