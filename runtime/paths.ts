// Where the project's own files are (Lua scripts, migrations, the built web app), whether the node runs from the
// TypeScript sources or from their compiled JavaScript under dist/ (`npm run build`).
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const parent = resolve(dirname(fileURLToPath(import.meta.url)), ".."); // <root>, or <root>/dist when compiled

/** The project's root: the folder holding package.json. */
export const ROOT = basename(parent) === "dist" ? resolve(parent, "..") : parent;

export function projectPath(...parts: string[]): string {
  return resolve(ROOT, ...parts);
}
