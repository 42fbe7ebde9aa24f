// The command `npm start` runs: plain node on the compiled JavaScript (npm run build:server, also run by npm ci and
// npm test). Tests that start Flock as a process start exactly that.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = "dist/runtime/main.js";

/** argv for spawn(process.execPath, ...): throws at once when the build is missing, rather than timing out. */
export function nodeEntry(): string[] {
  if (!existsSync(ROOT + MAIN)) throw new Error(`${MAIN} is missing: run npm run build:server`);
  return [MAIN];
}
