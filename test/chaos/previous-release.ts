// The release before the current tree, as `rolling-upgrade` runs it: found by its tag (`v<version>`), or, in a clone
// without tags, by the commit its CHANGELOG.md entry names (a shallow clone fetches its history first); checked out
// (git archive) into a folder under the temp dir and built there with its own sources and its own dependencies. The
// folder is kept, keyed by the commit, so a second run starts at once.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
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
    const r = spawnSync("git", ["-C", ROOT, "fetch", "-q", "--unshallow", "--tags", "origin"], {
      encoding: "utf8",
      timeout: 180_000,
    });
    if (r.status !== 0)
      throw new Error(
        `a shallow clone, and its history could not be fetched from origin: ${r.stderr || r.error?.message}`,
      );
  }
  const head = git("rev-parse", "HEAD");
  for (const tag of git("tag", "--list", "v*", "--sort=-v:refname").split("\n").filter(Boolean)) {
    const commit = commitOf(tag);
    if (commit && commit !== head && isAncestor(commit, head))
      return { version: tag.slice(1), commit, via: `tag ${tag}` };
  }
  // no tags in this clone: the CHANGELOG's released entries, `## 0.1.0 (2026-11-28, commit abd85bb)`, newest first
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  for (const m of changelog.matchAll(/^## (\d+\.\d+\.\d+) \([^)]*commit ([0-9a-f]{7,40})\)/gm)) {
    const commit = commitOf(m[2]!);
    if (commit && commit !== head && isAncestor(commit, head))
      return { version: m[1]!, commit, via: `CHANGELOG.md (commit ${m[2]})` };
  }
  throw new Error("no earlier release: no v* tag and no CHANGELOG.md entry names a commit before HEAD");
}

function run(cwd: string, cmd: string, args: string[], say: (line: string) => void): void {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.join(" ")} failed in ${cwd} (${r.status ?? r.signal}):\n${(r.stdout + r.stderr).slice(-3000)}`,
    );
  say(`${cmd} ${args.join(" ")}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/**
 * The release checked out and built, with its own dependencies (`npm ci` from its lockfile: npm's cache serves what
 * the current tree already fetched); answers its folder, which holds dist/runtime/main.js. Built in a folder of its
 * own and renamed into place when whole, so a run stopped halfway leaves nothing that looks built, and two runs at
 * once do not build into one folder.
 */
export function buildRelease(rel: Release, say: (line: string) => void): string {
  const dir = join(tmpdir(), `flock-release-${rel.commit}`);
  if (existsSync(join(dir, "dist/runtime/main.js"))) {
    say(`${rel.version} (${rel.via}) already built in ${dir}`);
    return dir;
  }
  const building = mkdtempSync(`${dir}.building-`);
  try {
    say(`checking out ${rel.version} (${rel.via}, ${rel.commit.slice(0, 12)}) into ${building}`);
    const tar = join(building, "release.tar");
    execFileSync("git", ["-C", ROOT, "archive", "-o", tar, rel.commit], { stdio: ["ignore", "ignore", "pipe"] });
    execFileSync("tar", ["-x", "-f", tar, "-C", building], { stdio: ["ignore", "ignore", "pipe"] });
    rmSync(tar);
    run(building, "npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"], say);
    // the server and the SDK package it serves MCP from, as its package.json builds them (no web app: the fault's
    // clients are SDK agents)
    run(building, "npm", ["run", "build:server"], say);
    if (!existsSync(join(building, "dist/runtime/main.js")))
      throw new Error(`${rel.version}'s build left no dist/runtime/main.js`);
    try {
      renameSync(building, dir);
    } catch (err) {
      // another run put its build there first: use that one
      if (!existsSync(join(dir, "dist/runtime/main.js"))) throw err;
      rmSync(building, { recursive: true, force: true });
    }
    return dir;
  } catch (err) {
    rmSync(building, { recursive: true, force: true });
    throw err;
  }
}
