// The command `npm start` runs: plain node on the compiled JavaScript (npm run build:server, also run by npm ci and
// npm test). Tests that start Flock as a process start exactly that, and refuse a build older than its sources.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = "dist/runtime/main.js";
const SOURCES = ["runtime", "handlers", "schema", "client"];

/** The newest modification time of the server's TypeScript sources (client/dist and declarations aside). */
function newestSource(): { file: string; mtime: number } {
  let newest = { file: "", mtime: 0 };
  for (const dir of SOURCES) {
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })) {
      if (!f.endsWith(".ts") || f.endsWith(".d.ts") || f.startsWith("dist/")) continue;
      const mtime = statSync(join(ROOT, dir, f)).mtimeMs;
      if (mtime > newest.mtime) newest = { file: join(dir, f), mtime };
    }
  }
  return newest;
}

let checked = false;

/** argv for spawn(process.execPath, ...): throws at once when the build is missing or stale, rather than testing old code. */
export function nodeEntry(): string[] {
  if (checked) return [MAIN];
  if (!existsSync(ROOT + MAIN)) throw new Error(`${MAIN} is missing: run npm run build:server`);
  const built = statSync(ROOT + MAIN).mtimeMs;
  const src = newestSource();
  if (src.mtime > built) throw new Error(`${MAIN} is older than ${src.file}: run npm run build:server`);
  checked = true;
  return [MAIN];
}
