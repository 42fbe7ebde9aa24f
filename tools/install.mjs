// Installs the development tools of tools/package-lock.json into tools/node_modules, once per version of that
// lockfile: the local chain (hardhat), the Solidity compiler (solc) and the MCP Inspector. They are needed only by
// some tests, `npm run payments:dev` and `npm run contracts:build`, so the root `npm ci` (what `npm start` needs)
// leaves them out. `npm test`, `npm run test:only` and `npm run payments:dev` run this first; it returns at once when
// the installed copy matches the lockfile (a stamp of the lockfile's SHA-256 in tools/node_modules).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const lock = readFileSync(new URL("package-lock.json", import.meta.url));
const want = createHash("sha256").update(lock).digest("hex");
const stamp = new URL("node_modules/.flock-tools-lock", import.meta.url);
if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === want) process.exit(0);

const started = Date.now();
console.error(
  "tools: installing the development tools (hardhat, solc, the MCP Inspector) into tools/node_modules, once",
);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = spawnSync(npm, ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], {
  cwd: dir,
  stdio: ["ignore", "inherit", "inherit"],
  shell: process.platform === "win32",
});
if (run.status !== 0) {
  console.error(
    `tools: npm ci in tools/ failed (${run.error?.message ?? `exit ${run.status}`}); run \`npm run tools\` again`,
  );
  process.exit(1);
}
writeFileSync(stamp, `${want}\n`);
console.error(`tools: installed in ${Math.round((Date.now() - started) / 1000)} s`);
