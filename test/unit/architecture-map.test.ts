// The architecture document is a map of the code (docs/ARCHITECTURE.md): every source file of runtime/ and handlers/
// is named where its job is described, and every path it names is there. A static check, no server: it fails naming
//   - each .ts file under runtime/ or handlers/ (dist/ and runtime/scripts' Lua aside) the document does not mention;
//   - each path under runtime/ or handlers/ the document names (backticked or not, a `{a,b}` group expanded, a `*`
//     matching within one folder) that does not exist, and each path written from inside a room of runtime/
//     (`messaging/hub.ts`) that does not exist there.
// The rule for a mention: a file of a room (a folder of runtime/: runtime/messaging/hub.ts, runtime/engines/redis/keys.ts)
// is mentioned by its path from runtime/, its room first (`messaging/hub.ts`, `engines/redis/keys.ts`), on its own
// or inside its full path (`runtime/messaging/hub.ts`); a file directly in runtime/ or handlers/ by its full path
// (`runtime/auth.ts`, `handlers/auth.ts`), since a bare `auth.ts` names either. A mention ends at a character that
// cannot continue a path, and starts after one that cannot begin a name (a `/` may precede it: a full path).
// A first test feeds the checker a made-up tree and document, so the check is known to bite.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, sep } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOC = "docs/ARCHITECTURE.md";

/** What the checker reads: the source files (repository paths, forward slashes) and whether a path exists. */
interface Tree {
  files: readonly string[];
  exists(path: string): boolean;
  /** The entries of a folder (names), for a `*` in a named path. */
  list(dir: string): readonly string[];
}

/** The name a mention of `file` must use (see the header). */
function mentionOf(file: string): string {
  const parts = file.split("/");
  // runtime/<room>/...: the path from runtime/; runtime/x.ts and handlers/x.ts: the full path
  return parts.length > 2 && parts[0] === "runtime" ? parts.slice(1).join("/") : file;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `doc` mentions `name` as a whole path (not the tail of a longer name, nor the head of one). */
function mentions(doc: string, name: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9_.-])${escape(name)}(?![A-Za-z0-9_/-]|\\.[A-Za-z0-9])`).test(doc);
}

/** `a/{b,c}.ts` -> `a/b.ts`, `a/c.ts` (one group at a time, nested groups too). */
function expand(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (!m) return [path];
  return m[1]!.split(",").flatMap((alt) => expand(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)));
}

/** Whether `path` exists, a `*` in its last segment matching any name in that folder. */
function present(tree: Tree, path: string): boolean {
  const clean = path.replace(/\/$/, "");
  if (!clean.includes("*")) return tree.exists(clean);
  const slash = clean.lastIndexOf("/");
  const dir = clean.slice(0, slash);
  const glob = new RegExp(
    `^${clean
      .slice(slash + 1)
      .split("*")
      .map(escape)
      .join(".*")}$`,
  );
  return tree.list(dir).some((n) => glob.test(n));
}

/** The paths under runtime/ or handlers/ the document names, and those it names from inside a room of runtime/. */
function namedPaths(doc: string, rooms: readonly string[]): { full: string[]; inRoom: string[] } {
  const token = "[A-Za-z0-9_.*{},-]+";
  const full = [
    ...doc.matchAll(new RegExp(`(?<![A-Za-z0-9_./-])(?:runtime|handlers)/(?:${token}/)*(?:${token})?`, "g")),
  ]
    .map((m) => m[0].replace(/[.,:;]+$/, ""))
    .flatMap(expand);
  const inRoom =
    rooms.length === 0
      ? []
      : [
          ...doc.matchAll(
            new RegExp(
              `(?<![A-Za-z0-9_./-])(?:${rooms.map(escape).join("|")})/(?:${token}/)*${token}\\.(?:ts|lua)\\b`,
              "g",
            ),
          ),
        ]
          .map((m) => m[0])
          .flatMap(expand);
  return { full, inRoom };
}

/** Every way the document and the tree disagree, one line each. */
function disagreements(doc: string, tree: Tree): string[] {
  const out: string[] = [];
  // a `{a,b}` group mentions each of its names
  const groups = [...doc.matchAll(/[A-Za-z0-9_./-]*\{[A-Za-z0-9_.,-]*\}[A-Za-z0-9_./{},-]*/g)].flatMap((m) =>
    expand(m[0]),
  );
  const text = `${doc}\n${groups.join("\n")}`;
  for (const file of tree.files) {
    const name = mentionOf(file);
    if (!mentions(text, name)) out.push(`${file}: not mentioned (as \`${name}\`)`);
  }
  const rooms = tree.list("runtime").filter((n) => !n.includes("."));
  const { full, inRoom } = namedPaths(doc, rooms);
  for (const p of new Set(full)) if (!present(tree, p)) out.push(`${p}: named by the document, not in the tree`);
  for (const p of new Set(inRoom))
    if (!present(tree, `runtime/${p}`)) out.push(`${p}: named by the document (as runtime/${p}), not in the tree`);
  return out;
}

/** The .ts sources of runtime/ and handlers/: no build output, no Lua, no declarations. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .map((f) => posix.join(dir, f.split(sep).join("/")))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && !/(^|\/)(dist|node_modules)\//.test(f));
}

const realTree: Tree = {
  files: [...sources("runtime"), ...sources("handlers")].sort(),
  exists: (p) => existsSync(join(ROOT, p)),
  list: (d) => {
    const abs = join(ROOT, d);
    return existsSync(abs) && statSync(abs).isDirectory() ? readdirSync(abs) : [];
  },
};

t.test("the check names a file the document leaves out, and a path the tree does not have", async (t) => {
  const files = [
    "runtime/auth.ts",
    "runtime/messaging/hub.ts",
    "runtime/messaging/made-up-missing.ts",
    "runtime/engines/redis/keys.ts",
    "runtime/engines/memory/feed.ts",
    "handlers/auth.ts",
    "handlers/groups.ts",
  ];
  const dirs = new Map([
    ["runtime", ["auth.ts", "messaging", "engines", "scripts"]],
    ["runtime/messaging", ["hub.ts", "made-up-missing.ts"]],
    ["runtime/engines", ["redis", "memory"]],
    ["runtime/engines/redis", ["keys.ts"]],
    ["runtime/engines/memory", ["feed.ts"]],
    ["runtime/scripts", ["take-1.lua", "strike-2.lua"]],
    ["handlers", ["auth.ts", "groups.ts"]],
  ]);
  const tree: Tree = {
    files,
    exists: (p) => files.includes(p) || dirs.has(p) || [...dirs].some(([d, ns]) => ns.some((n) => `${d}/${n}` === p)),
    list: (d) => dirs.get(d) ?? [],
  };
  const doc = [
    "The token check is `runtime/auth.ts`; the hub (messaging/hub.ts) takes sends.",
    "Keys: `runtime/engines/redis/keys.ts`. The memory feed is `feed.ts` of memory/.",
    "Sign-in answers in handlers/auth.ts. Groups: `handlers/{groups,channels}.ts`.",
    "Buckets are `runtime/scripts/take-*.lua`; folders: `runtime/engines/`, runtime/messaging.",
    "Gone: `runtime/ws/realtime.ts`, and `messaging/old-store.ts`; not a room: client/mcp/server.ts.",
  ].join("\n");
  t.same(disagreements(doc, tree), [
    "runtime/messaging/made-up-missing.ts: not mentioned (as `messaging/made-up-missing.ts`)",
    "runtime/engines/memory/feed.ts: not mentioned (as `engines/memory/feed.ts`)",
    "handlers/channels.ts: named by the document, not in the tree",
    "runtime/ws/realtime.ts: named by the document, not in the tree",
    "messaging/old-store.ts: named by the document (as runtime/messaging/old-store.ts), not in the tree",
  ]);
  // a name inside a longer one is no mention: `runtime/auth.ts` is not `handlers/auth.ts`, `x-hub.ts` not `hub.ts`
  t.same(
    disagreements("runtime/auth.ts messaging/x-hub.ts handlers/auth.tsx", {
      files: ["handlers/auth.ts", "runtime/messaging/hub.ts"],
      exists: () => true,
      list: () => [],
    }),
    [
      "handlers/auth.ts: not mentioned (as `handlers/auth.ts`)",
      "runtime/messaging/hub.ts: not mentioned (as `messaging/hub.ts`)",
    ],
  );
});

t.test(`${DOC} names every source file of runtime/ and handlers/, and only paths that exist`, async (t) => {
  const doc = readFileSync(join(ROOT, DOC), "utf8");
  t.ok(realTree.files.length > 100, "the tree's sources were found");
  const out = disagreements(doc, realTree);
  t.same(out, [], "the map and the tree agree (each line: a file the map leaves out, or a path it names that is gone)");
});
