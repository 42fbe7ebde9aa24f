// `flockctl --version`: the version of the @flock/client package it runs from (its package.json is one folder up
// from the sources, two from the compiled dist/cli/).
import { readFileSync } from "node:fs";

export function version(): string {
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "@flock/client" && pkg.version) return pkg.version;
    } catch {
      // not this one
    }
  }
  return "unknown";
}
