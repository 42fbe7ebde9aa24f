// Where the project's own files are (Lua scripts, migrations, the built web app), whether the node runs from the
// TypeScript sources or from their compiled JavaScript under dist/ (`npm run build`).
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url)); // <root>/runtime, or <root>/dist/runtime when compiled
const compiled = import.meta.url.endsWith(".js");

/** The project's root: the folder holding package.json. */
export const ROOT = resolve(here, compiled ? "../.." : "..");

export function projectPath(...parts: string[]): string {
  return resolve(ROOT, ...parts);
}
