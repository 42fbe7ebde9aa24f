// The import fence: which part of the tree may import which (docs/ARCHITECTURE.md, "The parts"). A static scan of the
// sources, with no server and no database: every import, export-from, dynamic import(), import type, require() and
// import.meta.resolve() with a literal specifier, read by the TypeScript parser (so imports inside strings and
// comments do not count). It fails naming the file, the line and the import when
//   - handlers/ imports runtime/engines/ (handlers reach the engines through the services the runtime gives them);
//   - runtime/ imports handlers/, except the composition root (runtime/server.ts, which mounts the routes and the
//     WebSocket's frame handler);
//   - schema/ imports runtime/ (the shapes of data sit below the runtime, which imports them);
//   - runtime/ imports client/'s files (it may use the SDK package only through an entry it publishes, as any other
//     user would: `@flock/client/mcp` for the MCP server the node serves at /v1/mcp);
//   - the client package imports anything outside client/ (it is its own package: what client/tsconfig.json compiles
//     into it; client/scripts/, which generates its types from schema/, is a build step and not part of it).
// A first test feeds the checker made-up files, one breaking each rule, so the fence is known to bite.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** The one runtime/ file that wires handlers/ into the router (and the WebSocket's frame handler). */
const COMPOSITION_ROOT = "runtime/server.ts";
const SOURCE = /\.(?:[cm]?ts|tsx|[cm]?js)$/;

interface Import {
  /** The importing file, relative to the repository root, with forward slashes. */
  file: string;
  line: number;
  specifier: string;
}

/** Every literal module specifier in `text`, with its line. */
function importsOf(file: string, text: string): Import[] {
  const kind = /\.[cm]?js$/.test(file)
    ? ts.ScriptKind.JS
    : file.endsWith(".tsx")
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const out: Import[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) {
      out.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, specifier: node.text });
    }
  };
  const isRequire = (callee: ts.Expression): boolean =>
    (ts.isIdentifier(callee) && callee.text === "require") ||
    // createRequire(import.meta.url)("x")
    (ts.isCallExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === "createRequire") ||
    // require.resolve("x"), import.meta.resolve("x")
    (ts.isPropertyAccessExpression(callee) &&
      callee.name.text === "resolve" &&
      ((ts.isIdentifier(callee.expression) && callee.expression.text === "require") ||
        ts.isMetaProperty(callee.expression)));
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || isRequire(node.expression))
    )
      add(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** What a specifier names: a file of the repository (relative to its root; "../" first when outside it) or a package. */
function target(imp: Import): { path: string } | { pkg: string; subpath: string } {
  const spec = imp.specifier;
  if (spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("file:")) {
    const abs = spec.startsWith("file:")
      ? fileURLToPath(spec)
      : spec.startsWith("/")
        ? spec
        : join(ROOT, dirname(imp.file), spec);
    return { path: relative(ROOT, abs).split(sep).join("/") };
  }
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  return { pkg: parts.slice(0, n).join("/"), subpath: ["."].concat(parts.slice(n)).join("/") };
}

const CLIENT_PACKAGE = JSON.parse(readFileSync(join(ROOT, "client/package.json"), "utf8")) as {
  name: string;
  exports: Record<string, unknown>;
};

interface Rule {
  /** Whose imports the rule reads. */
  applies(file: string, clientFiles: ReadonlySet<string>): boolean;
  /** Why this import breaks it, or undefined. */
  breaks(imp: Import): string | undefined;
}

const under = (path: string, dir: string) => path.startsWith(`${dir}/`);

const RULES: Rule[] = [
  {
    applies: (f) => under(f, "handlers"),
    breaks: (imp) => {
      const to = target(imp);
      return "path" in to && under(to.path, "runtime/engines")
        ? "handlers/ must not import runtime/engines/ (use the services the runtime hands them)"
        : undefined;
    },
  },
  {
    applies: (f) => under(f, "runtime") && f !== COMPOSITION_ROOT,
    breaks: (imp) => {
      const to = target(imp);
      return "path" in to && under(to.path, "handlers")
        ? `runtime/ must not import handlers/ (only ${COMPOSITION_ROOT}, the composition root, mounts them)`
        : undefined;
    },
  },
  {
    applies: (f) => under(f, "schema"),
    breaks: (imp) => {
      const to = target(imp);
      return "path" in to && under(to.path, "runtime")
        ? "schema/ must not import runtime/ (the runtime imports the schemas, not the other way)"
        : undefined;
    },
  },
  {
    applies: (f) => under(f, "runtime"),
    breaks: (imp) => {
      const to = target(imp);
      if ("path" in to)
        return under(to.path, "client")
          ? `runtime/ must not import client/'s files (use a published entry of ${CLIENT_PACKAGE.name})`
          : undefined;
      if (to.pkg === CLIENT_PACKAGE.name && !(to.subpath in CLIENT_PACKAGE.exports))
        return `${to.subpath} is not an entry ${CLIENT_PACKAGE.name} publishes (client/package.json "exports")`;
      return undefined;
    },
  },
  {
    applies: (f, clientFiles) => clientFiles.has(f),
    breaks: (imp) => {
      const to = target(imp);
      return "path" in to && !under(to.path, "client")
        ? "the client package must not import anything outside client/"
        : undefined;
    },
  },
];

/** Every import that breaks a rule, as "file:line imports 'specifier': why". */
function violations(files: ReadonlyMap<string, string>, clientFiles: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const rules = RULES.filter((r) => r.applies(file, clientFiles));
    if (rules.length === 0) continue;
    for (const imp of importsOf(file, text)) {
      for (const rule of rules) {
        const why = rule.breaks(imp);
        if (why) out.push(`${imp.file}:${imp.line} imports '${imp.specifier}': ${why}`);
      }
    }
  }
  return out;
}

/** The source files under `dir` (relative to the root), built output and dependencies aside. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .map((f) => posix.join(dir, f.split(sep).join("/")))
    .filter((f) => SOURCE.test(f) && !f.endsWith(".d.ts") && !/(^|\/)(dist|node_modules)\//.test(f));
}

/** The files client/tsconfig.json compiles into the package. */
function clientPackageFiles(): Set<string> {
  const configPath = join(ROOT, "client/tsconfig.json");
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(configPath));
  return new Set(parsed.fileNames.map((f) => relative(ROOT, f).split(sep).join("/")));
}

t.test("the fence catches an import breaking each rule, and lets the allowed ones through", async (t) => {
  const files = new Map([
    [
      "handlers/moments.ts",
      `import { RedisFeed } from "../runtime/engines/redis/feed.ts";\nimport { ok } from "../runtime/http/route.ts";`,
    ],
    ["handlers/nested/x.ts", `const m = await import("../../runtime/engines/memory/index.ts");`],
    [
      "runtime/http/router.ts",
      `export { allRoutes } from "../../handlers/index.ts";\nimport { z } from "zod";\nimport { parseId } from "../../schema/ids.ts";`,
    ],
    [COMPOSITION_ROOT, `import { allRoutes } from "../handlers/index.ts";`],
    [
      "schema/moments.ts",
      `import type { Route } from "../runtime/http/route.ts";\n// import { x } from "../runtime/ids.ts";\nconst s = "import('../runtime/ids.ts')";`,
    ],
    ["schema/openapi/document.ts", `type P = import("../../runtime/limits/policies.ts").PolicyName;`],
    [
      "runtime/mcp/sessions.ts",
      `import type { FlockMcp } from "../../client/mcp/server.ts";\nconst a = import("@flock/client/mcp");\nconst b = import("@flock/client/dist/mcp/server.js");`,
    ],
    [
      "client/index.ts",
      `import { Transport } from "./transport.ts";\nimport type { Moment } from "../schema/moments.ts";`,
    ],
    [
      "client/mcp/server.ts",
      `import { Flock } from "../index.ts";\nimport { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";\nimport { ApiError } from "../../runtime/errors.ts";`,
    ],
    ["client/bin.js", `const { main } = require("../runtime/main.ts");`],
    ["client/scripts/gen-types.ts", `import * as agents from "../../schema/agents.ts";`],
  ]);
  const clientFiles = new Set(["client/index.ts", "client/mcp/server.ts", "client/bin.js"]);
  t.same(violations(files, clientFiles), [
    "handlers/moments.ts:1 imports '../runtime/engines/redis/feed.ts': handlers/ must not import runtime/engines/ (use the services the runtime hands them)",
    "handlers/nested/x.ts:1 imports '../../runtime/engines/memory/index.ts': handlers/ must not import runtime/engines/ (use the services the runtime hands them)",
    `runtime/http/router.ts:1 imports '../../handlers/index.ts': runtime/ must not import handlers/ (only ${COMPOSITION_ROOT}, the composition root, mounts them)`,
    "schema/moments.ts:1 imports '../runtime/http/route.ts': schema/ must not import runtime/ (the runtime imports the schemas, not the other way)",
    "schema/openapi/document.ts:1 imports '../../runtime/limits/policies.ts': schema/ must not import runtime/ (the runtime imports the schemas, not the other way)",
    "runtime/mcp/sessions.ts:1 imports '../../client/mcp/server.ts': runtime/ must not import client/'s files (use a published entry of @flock/client)",
    `runtime/mcp/sessions.ts:3 imports '@flock/client/dist/mcp/server.js': ./dist/mcp/server.js is not an entry @flock/client publishes (client/package.json "exports")`,
    "client/index.ts:2 imports '../schema/moments.ts': the client package must not import anything outside client/",
    "client/mcp/server.ts:3 imports '../../runtime/errors.ts': the client package must not import anything outside client/",
    "client/bin.js:1 imports '../runtime/main.ts': the client package must not import anything outside client/",
  ]);
});

t.test("the repository keeps to the fence", async (t) => {
  const clientFiles = clientPackageFiles();
  t.ok(
    clientFiles.has("client/index.ts") && clientFiles.has("client/mcp/server.ts"),
    "the client package's files are known",
  );
  const names = ["runtime", "handlers", "schema", "client"].flatMap(sources);
  const files = new Map(names.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
  for (const dir of ["runtime/", "handlers/", "schema/", "client/"])
    t.ok(
      names.some((f) => f.startsWith(dir)),
      `${dir} has sources`,
    );
  t.same(
    [...clientFiles].filter((f) => !files.has(f)),
    [],
    "every file of the client package is scanned",
  );

  // the exemption names the file that really is the composition root
  const wiring = importsOf(COMPOSITION_ROOT, files.get(COMPOSITION_ROOT) ?? "").map((i) => target(i));
  t.ok(
    wiring.some((to) => "path" in to && to.path === "handlers/index.ts"),
    `${COMPOSITION_ROOT} mounts handlers/index.ts`,
  );

  t.same(violations(files, clientFiles), [], "no import crosses the fence");
});
