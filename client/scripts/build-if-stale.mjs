// The prepack step: builds the package (`npm run build`) unless dist/ is newer than every source, so that packing a
// checkout whose dist/ is fresh rewrites nothing (a rebuild rewrites dist/ under any process running it meanwhile,
// such as the tests that run the CLI while another packs). A clean clone, or any edited source, builds.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUTPUTS = ["dist/index.js", "dist/index.d.ts", "dist/cli.js", "dist/cjs/index.js", "dist/cjs/package.json"];

const mtime = (file) => {
  try {
    return statSync(join(ROOT, file)).mtimeMs;
  } catch {
    return undefined;
  }
};

/** The newest mtime of the sources: every .ts outside dist/ and node_modules/, and the tsconfig files. */
function newestSource(dir = "") {
  let newest = 0;
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "dist" && e.name !== "node_modules") newest = Math.max(newest, newestSource(rel));
    } else if (e.name.endsWith(".ts") || /^tsconfig.*\.json$/.test(e.name)) {
      newest = Math.max(newest, mtime(rel) ?? 0);
    }
  }
  return newest;
}

const built = OUTPUTS.map(mtime);
const oldest = built.some((m) => m === undefined) ? 0 : Math.min(...built);
if (oldest > newestSource()) {
  console.error("@flock/client: dist/ is newer than every source; packing it as it is");
} else {
  execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build"], { cwd: ROOT, stdio: "inherit" });
}
