// The import fence: which part of the tree may import which (docs/ARCHITECTURE.md, "The parts"), and where SQL may
// be written. A static scan of the sources, with no server and no database, read by the TypeScript parser (so
// imports and SQL inside strings and comments do not count).
//
// Imports: every import, export-from, dynamic import(), import type, require() and import.meta.resolve() with a
// literal specifier. It fails naming the file, the line and the import when
//   - handlers/ imports runtime/engines/ (handlers reach the engines through the services the runtime gives them);
//   - runtime/ imports handlers/, except the composition root (runtime/server.ts, which mounts the routes and the
//     WebSocket's frame handler);
//   - schema/ imports runtime/ (the shapes of data sit below the runtime, which imports them);
//   - runtime/ imports client/'s files (it may use the SDK package only through an entry it publishes, as any other
//     user would: `@flock/client/mcp` for the MCP server the node serves at /v1/mcp);
//   - the client package imports anything outside client/ (it is its own package: what client/tsconfig.json compiles
//     into it; client/scripts/, which generates its types from schema/, is a build step and not part of it);
//   - product code imports test/ (product: runtime/, handlers/, schema/, client/, web/, deploy/, bench/; what both
//     need, such as the private servers, lives on the product side: deploy/local/private-servers.ts).
//
// SQL and transactions. It fails naming the file, the line and what it found when
//   - handlers/ open a transaction (a `.begin(` call) or hold SQL (an SQL tagged template, an `.unsafe(` call): a
//     handler parses, authorises, calls one use case and answers; the use case (runtime/) opens the transaction and
//     calls the stores;
//   - a file of runtime/ or handlers/ not named `*-store.ts` holds an SQL statement (an SQL tagged template that is a
//     statement, an `.unsafe(` call). runtime/db/ is the database layer itself (the driver, the migrations and their
//     locks, creating the database) and is not held to it.
// What counts as SQL is read from the syntax tree, not from the text:
//   - a statement is a tagged template whose text, before its first substitution and after whitespace and SQL
//     comments, begins with an SQL keyword (select, insert, update, delete, with, ..., the list in SQL_KEYWORD), or any
//     `.unsafe(` call (the SQL is a string then, and the call runs it as it is);
//   - a fragment is any other tagged template: a condition (sql`and id < ${x}`), a column list, a parenthesised
//     subquery, one that begins with a substitution. A fragment runs only inside the statement it is put in, and that
//     statement is held to the rule wherever it is written, so a fragment may be written outside a store. The parser
//     cannot tell an SQL fragment from another tagged template without the type checker either; in handlers/, which
//     hold no SQL at all, a tagged template is SQL also when its tag is a database client by the names this tree gives
//     one (sql, tx, conn, and any name ending in sql: svc.sql, this.sql, sql<Row[]>).
// A first test feeds the checkers made-up files, one breaking each rule, so the fence is known to bite.
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

/** The syntax tree of a source file, in the dialect its name says. */
function parse(file: string, text: string): ts.SourceFile {
  const kind = /\.[cm]?js$/.test(file)
    ? ts.ScriptKind.JS
    : file.endsWith(".tsx")
      ? ts.ScriptKind.TSX
      : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
}

/** Every literal module specifier in `text`, with its line. */
function importsOf(file: string, text: string): Import[] {
  const sf = parse(file, text);
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

/** The product's folders: everything that ships or runs against a deployment, tests aside. */
const PRODUCT = ["runtime", "handlers", "schema", "client", "web", "deploy", "bench"];

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
  {
    applies: (f) => PRODUCT.some((dir) => under(f, dir)),
    breaks: (imp) => {
      const to = target(imp);
      return "path" in to && under(to.path, "test")
        ? "product code must not import test/ (what both need lives on the product side)"
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

/** The SQL keywords a statement begins with. */
const SQL_KEYWORD =
  /^(?:select|insert|update|delete|with|create|alter|drop|lock|set|do|begin|truncate|vacuum|analyze|notify|listen|copy|values|table|explain|call|reset|show)\b/i;
/** The names a database client goes by in this tree (the tag's last name): sql, tx, conn, svc.sql, this.sql. */
const SQL_CLIENT = /^(?:tx|conn)$|sql$/i;
/** The database layer itself, which is not held to the stores rule. */
const DATABASE_LAYER = "runtime/db";

/** `text` without the whitespace and SQL comments it begins with. */
function withoutLead(text: string): string {
  for (let rest = text; ;) {
    const t = rest.trimStart();
    if (t.startsWith("--")) rest = t.includes("\n") ? t.slice(t.indexOf("\n") + 1) : "";
    else if (t.startsWith("/*")) rest = t.includes("*/") ? t.slice(t.indexOf("*/") + 2) : "";
    else return t;
  }
}

/** The name an expression ends in (`svc.sql` → sql, `sql<Row[]>` is its tag `sql`), if it has one. */
function lastName(e: ts.Expression): string | undefined {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return undefined;
}

/** One piece of SQL or transaction found in a file. */
interface SqlUse {
  line: number;
  /**
   * `statement`: a tagged template that is an SQL statement (`keyword`, lowercase, says which); `unsafe`: an
   * `.unsafe(` call; `fragment`: any other tagged template whose tag is a database client by name; `begin`: a
   * `.begin(` call.
   */
  kind: "statement" | "unsafe" | "fragment" | "begin";
  keyword?: string;
}

/** Every SQL statement, `.unsafe(` and `.begin(` call in `text`, and every tagged template on a database client. */
function sqlOf(file: string, text: string): SqlUse[] {
  const sf = parse(file, text);
  const out: SqlUse[] = [];
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node)) {
      const tpl = node.template;
      const head = ts.isNoSubstitutionTemplateLiteral(tpl) ? tpl.text : tpl.head.text;
      const keyword = SQL_KEYWORD.exec(withoutLead(head))?.[0].toLowerCase();
      if (keyword) out.push({ line: at(node), kind: "statement", keyword });
      else if (SQL_CLIENT.test(lastName(node.tag) ?? "")) out.push({ line: at(node), kind: "fragment" });
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text;
      if (name === "unsafe" || name === "begin") out.push({ line: at(node), kind: name });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every piece of SQL or transaction that breaks a rule, as "file:line what: why". */
function sqlViolations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const handler = under(file, "handlers");
    const bound = (handler || under(file, "runtime")) && !under(file, DATABASE_LAYER) && !file.endsWith("-store.ts");
    if (!handler && !bound) continue;
    for (const use of sqlOf(file, text)) {
      const what =
        use.kind === "statement"
          ? `holds an SQL statement (${use.keyword})`
          : use.kind === "fragment"
            ? "holds SQL (a tagged template on a database client)"
            : `calls .${use.kind}(`;
      if (handler)
        out.push(
          use.kind === "begin"
            ? `${file}:${use.line} ${what}: handlers/ open no transaction (the use case in runtime/ opens it)`
            : `${file}:${use.line} ${what}: handlers/ hold no SQL (a use case in runtime/ calls the stores)`,
        );
      if (bound && (use.kind === "statement" || use.kind === "unsafe"))
        out.push(`${file}:${use.line} ${what}: SQL statements live only in *-store.ts files (runtime/db/ aside)`);
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
    [
      "deploy/local/cluster.ts",
      `import { Child } from "./process.ts";\nimport { PrivateRedis } from "../../test/helpers/private-servers.ts";`,
    ],
    ["bench/peers/servers.ts", `const { freePort } = await import("../../test/helpers/private-servers.ts");`],
    [
      "web/src/app.tsx",
      `import type { Agent } from "../../test/helpers/http.ts";\nconst a = <p>import("../../test/x.ts")</p>;`,
    ],
    [
      "runtime/node.ts",
      `import { connectSql } from "./db/client.ts";\nimport { until } from "../test/helpers/wait.ts";`,
    ],
    [
      "test/helpers/node.ts",
      `import { PrivatePostgres } from "./private-servers.ts";\nimport { ROOT } from "../../deploy/local/cluster.ts";`,
    ],
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
    "deploy/local/cluster.ts:2 imports '../../test/helpers/private-servers.ts': product code must not import test/ (what both need lives on the product side)",
    "bench/peers/servers.ts:1 imports '../../test/helpers/private-servers.ts': product code must not import test/ (what both need lives on the product side)",
    "web/src/app.tsx:1 imports '../../test/helpers/http.ts': product code must not import test/ (what both need lives on the product side)",
    "runtime/node.ts:2 imports '../test/helpers/wait.ts': product code must not import test/ (what both need lives on the product side)",
  ]);
});

t.test("the fence catches a transaction or SQL breaking each rule, and lets the allowed ones through", async (t) => {
  const files = new Map([
    [
      "handlers/friends.ts",
      [
        "const out = await svc.sql.begin(async (tx) => lockPair(tx, me, to));",
        "await svc.sql`select 1`;",
        "const older = tx`and id < ${before}`;",
        'await svc.sql.unsafe("vacuum");',
        '// svc.sql.begin(...) and sql`select 1` in a comment, "sql`delete from x`" in a string',
        "const friend = await acceptFriendRequest(svc, log, principal.id, id);",
      ].join("\n"),
    ],
    // a handler is not a store by its name
    ["handlers/things-store.ts", "export const all = (sql: Sql) => sql`select * from things`;"],
    [
      "runtime/social/likes.ts",
      [
        "const change = sql`",
        "  -- the likes that changed",
        "  /* all of them */ insert into moment_likes select * from vis`;",
        "const mine = sql`and m.author = ${me}`;",
        "const counted = sql`(select count(*) from moments)`;",
        "const settled = sql`settled = true`;",
        "await tx.unsafe(`set local statement_timeout = 1000`);",
        "return this.sql.begin((tx) => react(tx, kind, items));",
        "const title = html`<b>select</b> a moment`;",
      ].join("\n"),
    ],
    ["runtime/social/likes-store.ts", "await sql`WITH req AS (select 1) select * from req`;\nawait tx.unsafe(text);"],
    ["runtime/db/migrate.ts", "await tx`select pg_advisory_xact_lock(${LOCK_ID})`;\nawait tx.unsafe(migration.sql);"],
    // a store is named *-store.ts: store.ts is not one
    ["runtime/payments/store.ts", "await sql`update payments set status = 'failed'`;"],
    ["bench/lib/fleet.ts", "await sql`delete from principals`;"],
    ["test/x.test.ts", "await sql`select 1`;"],
  ]);
  t.same(sqlViolations(files), [
    "handlers/friends.ts:1 calls .begin(: handlers/ open no transaction (the use case in runtime/ opens it)",
    "handlers/friends.ts:2 holds an SQL statement (select): handlers/ hold no SQL (a use case in runtime/ calls the stores)",
    "handlers/friends.ts:2 holds an SQL statement (select): SQL statements live only in *-store.ts files (runtime/db/ aside)",
    "handlers/friends.ts:3 holds SQL (a tagged template on a database client): handlers/ hold no SQL (a use case in runtime/ calls the stores)",
    "handlers/friends.ts:4 calls .unsafe(: handlers/ hold no SQL (a use case in runtime/ calls the stores)",
    "handlers/friends.ts:4 calls .unsafe(: SQL statements live only in *-store.ts files (runtime/db/ aside)",
    "handlers/things-store.ts:1 holds an SQL statement (select): handlers/ hold no SQL (a use case in runtime/ calls the stores)",
    "runtime/social/likes.ts:1 holds an SQL statement (insert): SQL statements live only in *-store.ts files (runtime/db/ aside)",
    "runtime/social/likes.ts:7 calls .unsafe(: SQL statements live only in *-store.ts files (runtime/db/ aside)",
    "runtime/payments/store.ts:1 holds an SQL statement (update): SQL statements live only in *-store.ts files (runtime/db/ aside)",
  ]);
});

t.test("the repository keeps to the fence", async (t) => {
  const clientFiles = clientPackageFiles();
  t.ok(
    clientFiles.has("client/index.ts") && clientFiles.has("client/mcp/server.ts"),
    "the client package's files are known",
  );
  const names = PRODUCT.flatMap(sources);
  const files = new Map(names.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
  for (const dir of PRODUCT.map((d) => `${d}/`))
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

  // the SQL checker sees the statements where they are allowed, so its silence elsewhere means something
  const statements = (f: string) => sqlOf(f, files.get(f) ?? "").filter((u) => u.kind === "statement").length;
  t.ok(statements("runtime/accounts/agents-store.ts") > 0, "the statements of a store are seen");
  t.ok(
    names.filter((f) => under(f, DATABASE_LAYER)).some((f) => statements(f) > 0),
    "the statements of the database layer are seen",
  );
  t.same(sqlViolations(files), [], "handlers open no transaction and hold no SQL; SQL statements live in stores");
});
