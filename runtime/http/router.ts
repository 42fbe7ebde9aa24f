// Path routing with `:param` segments. Static routes are a map lookup; parameterised ones a short scan.
import type { Route } from "./route.ts";

interface Compiled {
  route: Route;
  segments: string[]; // ":name" for a parameter
}

type Match =
  | { kind: "found"; route: Route; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[] }
  | { kind: "not_found" };

export class Router {
  private readonly staticRoutes = new Map<string, Map<string, Route>>(); // path -> method -> route
  private readonly dynamic: Compiled[] = [];

  add(route: Route): void {
    const segments = route.path.split("/").slice(1);
    if (segments.some((s) => s.startsWith(":"))) {
      this.dynamic.push({ route, segments });
      return;
    }
    let byMethod = this.staticRoutes.get(route.path);
    if (!byMethod) {
      byMethod = new Map();
      this.staticRoutes.set(route.path, byMethod);
    }
    if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    byMethod.set(route.method, route);
  }

  match(method: string, path: string): Match {
    const normalized = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const byMethod = this.staticRoutes.get(normalized);
    if (byMethod) {
      const route = byMethod.get(method) ?? (method === "HEAD" ? headable(byMethod.get("GET")) : undefined);
      if (route) return { kind: "found", route, params: {} };
    }
    const allow = new Set(byMethod ? byMethod.keys() : []);
    const parts = normalized.split("/").slice(1);
    for (const c of this.dynamic) {
      const params = matchSegments(c.segments, parts);
      if (!params) continue;
      if (c.route.method === method || (method === "HEAD" && headable(c.route))) {
        return { kind: "found", route: c.route, params };
      }
      allow.add(c.route.method);
      if (headable(c.route)) allow.add("HEAD");
    }
    if (headable(byMethod?.get("GET"))) allow.add("HEAD");
    return allow.size > 0 ? { kind: "method_not_allowed", allow: [...allow] } : { kind: "not_found" };
  }
}

/** A GET route HEAD may fall back to: every GET without side effects (not, say, a long poll that hands out messages). */
function headable(route: Route | undefined): Route | undefined {
  return route && route.method === "GET" && !route.noHead ? route : undefined;
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith(":")) {
      if (v === "") return null;
      let value: string;
      try {
        value = decodeURIComponent(v);
      } catch {
        return null;
      }
      // No id holds U+0000 (and Postgres text cannot): nothing such a path could name exists.
      if (value.includes("\u0000")) return null;
      params[p.slice(1)] = value;
    } else if (p !== v) {
      return null;
    }
  }
  return params;
}
