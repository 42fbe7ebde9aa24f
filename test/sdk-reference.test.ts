// The SDK reference (/docs/sdk/, TypeDoc over the client's doc comments) is complete: every function and class the
// package exports (from "@flock/client", "@flock/client/payments" and "@flock/client/mcp"), and every public method
// of those classes, has a doc comment with an `@example`. Read with the TypeScript compiler API, following re-exports
// to the declarations, so a new method without its comment and example fails here.
import { resolve } from "node:path";
import t from "tap";
import ts from "typescript";

const CLIENT = resolve(import.meta.dirname, "../client");
const ENTRIES = ["index.ts", "payments.ts", "mcp/server.ts"].map((f) => resolve(CLIENT, f));

/** What lacks a doc comment or an example, as "name: what is missing". */
export function undocumented(entries: string[]): string[] {
  const program = ts.createProgram(entries, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
  });
  const checker = program.getTypeChecker();
  const problems = new Set<string>();
  const check = (name: string, node: ts.Node) => {
    const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
    if (docs.length === 0) problems.add(`${name}: no doc comment`);
    else if (!docs.some((d) => d.tags?.some((tag) => tag.tagName.text === "example")))
      problems.add(`${name}: no @example`);
  };
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`cannot read ${entry}`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      for (const decl of symbol.declarations ?? []) {
        if (ts.isFunctionDeclaration(decl)) check(exported.name, decl);
        if (!ts.isClassDeclaration(decl)) continue;
        check(exported.name, decl);
        for (const member of decl.members) {
          if (!ts.isMethodDeclaration(member) || !member.name || !ts.isIdentifier(member.name)) continue;
          const mods = ts.getCombinedModifierFlags(member);
          if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || member.name.text.startsWith("#"))
            continue;
          check(`${exported.name}.${member.name.text}`, member);
        }
      }
    }
  }
  return [...problems].sort();
}

t.test("every exported function, class and public method has a doc comment with an example", async (t) => {
  const missing = undocumented(ENTRIES);
  t.same(missing, [], `undocumented:\n${missing.join("\n")}`);
});

t.test("the check fails on an undocumented export", async (t) => {
  const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const dir = await mkdtemp(resolve(tmpdir(), "flock-ref-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = resolve(dir, "x.ts");
  await writeFile(
    file,
    [
      "/** Documented.\n * @example\n * ```ts\n * ok();\n * ```\n */",
      "export function ok() {}",
      "/** No example. */",
      "export function noExample() {}",
      "export function bare() {}",
      "/** A class.\n * @example\n * ```ts\n * new K().m();\n * ```\n */",
      "export class K { m() {} private p() {} }",
    ].join("\n"),
  );
  t.same(undocumented([file]), ["K.m: no doc comment", "bare: no doc comment", "noExample: no @example"]);
});
