// The release before the current tree, as `rolling-upgrade` runs it: found by its tag (`v<version>`), or, in a clone
// without tags, by the commit its CHANGELOG.md entry names; checked out (git archive) into a folder under the temp
// dir and built there with its own sources. Its dependencies: where every package its lockfile pins is pinned to the
// same version in the current tree's, the current node_modules serve (linked entry by entry, the SDK package aside,
// which is built from the release's own client/); otherwise `npm ci` runs in the folder. The folder is kept, keyed by
// the commit, so a second run starts at once.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../deploy/local/cluster.ts";

export interface Release {
  /** `0.1.0` */
  version: string;
  commit: string;
  /** How it was found: its tag, or the CHANGELOG entry. */
  via: string;
}

function git(...args: string[]): string {
  return execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function commitOf(ref: string): string | undefined {
  try {
    return git("rev-parse", "--verify", "--quiet", `${ref}^{commit}`);
  } catch {
    return undefined;
  }
}

function isAncestor(commit: string, of: string): boolean {
  return spawnSync("git", ["-C", ROOT, "merge-base", "--is-ancestor", commit, of]).status === 0;
}

/** The newest release that is an ancestor of HEAD and not HEAD itself. */
export function previousRelease(): Release {
  // a shallow clone holds no earlier commit: fetch the history and the tags from where it was cloned
  if (git("rev-parse", "--is-shallow-repository") === "true") {
    execFileSync("git", ["-C", ROOT, "fetch", "-q", "--unshallow", "--tags", "origin"], { stdio: "ignore", timeout: 180_000 });
  }
  const head = git("rev-parse", "HEAD");
  for (const tag of git("tag", "--list", "v*", "--sort=-v:refname").split("\n").filter(Boolean)) {
    const commit = commitOf(tag);
    if (commit && commit !== head && isAncestor(commit, head)) return { version: tag.slice(1), commit, via: `tag ${tag}` };
  }
  // no tags in this clone: the CHANGELOG's released entries, `## 0.1.0 (2026-11-28, commit abd85bb)`, newest first
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  for (const m of changelog.matchAll(/^## (\d+\.\d+\.\d+) \([^)]*commit ([0-9a-f]{7,40})\)/gm)) {
    const commit = commitOf(m[2]!);
    if (commit && commit !== head && isAncestor(commit, head)) return { version: m[1]!, commit, via: `CHANGELOG.md (commit ${m[2]})` };
  }
  throw new Error("no earlier release: no v* tag and no CHANGELOG.md entry names a commit before HEAD");
}

type Lock = { packages: Record<string, { version?: string; link?: boolean }> };

/** True when every package `older` pins is pinned to the same version in `newer` (workspace links aside). */
export function lockServes(older: Lock, newer: Lock): boolean {
  for (const [path, p] of Object.entries(older.packages)) {
    if (path === "" || p.link || !path.startsWith("node_modules/") || path.startsWith("node_modules/@flock/")) continue;
    if (newer.packages[path]?.version !== p.version) return false;
  }
  return true;
}

function run(cwd: string, cmd: string, args: string[], say: (line: string) => void): void {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed in ${cwd} (${r.status ?? r.signal}):\n${(r.stdout + r.stderr).slice(-3000)}`);
  say(`${cmd} ${args.join(" ")}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** The release checked out and built; answers its folder (which holds dist/runtime/main.js). */
export function buildRelease(rel: Release, say: (line: string) => void): string {
  const dir = join(tmpdir(), `flock-release-${rel.commit.slice(0, 12)}`);
  // the marker names where its node_modules came from: its own `npm ci`, or a tree whose node_modules it links to
  // (usable only while that tree is there: a clone CI removed leaves dangling links, and the build is made again)
  const done = join(dir, ".flock-built");
  const from = existsSync(done) ? readFileSync(done, "utf8").split("\n")[1] : undefined;
  if (from === "npm ci" || (from !== undefined && existsSync(join(from, "node_modules", "typescript", "package.json")))) {
    say(`${rel.version} (${rel.via}) already built in ${dir}`);
    return dir;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  say(`checking out ${rel.version} (${rel.via}, ${rel.commit.slice(0, 12)}) into ${dir}`);
  execFileSync("sh", ["-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", ROOT, rel.commit, dir]);

  const older = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as Lock;
  const newer = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as Lock;
  const linked = lockServes(older, newer);
  if (linked) {
    // every entry of the current node_modules, linked; the SDK package is the release's own client/
    const nm = join(dir, "node_modules");
    mkdirSync(join(nm, "@flock"), { recursive: true });
    for (const e of readdirSync(join(ROOT, "node_modules"))) {
      if (e !== "@flock") symlinkSync(join(ROOT, "node_modules", e), join(nm, e));
    }
    symlinkSync(join(dir, "client"), join(nm, "@flock", "client"));
    say(`its lockfile pins nothing the current one does not: the current node_modules serve`);
  } else {
    run(dir, "npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], say);
  }
  // the server and the SDK package it serves MCP from, as its package.json builds them (no web app: the fault's
  // clients are SDK agents)
  run(dir, "npm", ["run", "build:server"], say);
  if (!existsSync(join(dir, "dist/runtime/main.js"))) throw new Error(`${rel.version}'s build left no dist/runtime/main.js in ${dir}`);
  writeFileSync(done, `${rel.commit}\n${linked ? ROOT.replace(/\/$/, "") : "npm ci"}\n`);
  return dir;
}
