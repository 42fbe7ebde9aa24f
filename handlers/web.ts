// The web app at `/`: web/dist/index.html (never cached: it names the current build) and the bundle's files under
// /assets/, whose names carry a content hash and so are cached for good, and the service worker at /sw.js (web/sw.ts:
// at the root, so its scope is the whole app; never cached). Every answer carries a strict CSP: scripts,
// styles and fonts from this origin only; images from here, blob: (attachments fetched with the bearer token) and
// data: (the empty icon); the API over fetch and the WebSocket on this host, plus any origins listed in
// FLOCK_WEB_CONNECT (space separated) for an app pointed at another Flock. `node web/build.mjs` builds web/dist.
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { notFound } from "../runtime/errors.ts";
import { defineRoute, type Reply, type Route } from "../runtime/http/route.ts";
import { projectPath } from "../runtime/paths.ts";

const DIST = projectPath("web", "dist");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
  ".map": "application/json",
};

/** Only a hashed bundle name (name-HASH.ext): no path separators, no dot files. */
const ASSET_NAME = /^[A-Za-z0-9_-]+-[A-Za-z0-9]{6,}\.[a-z0-9]+$/;
/** A Host header fit to appear in a CSP source (host, optional port). */
const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;
/** An origin fit to appear in a CSP source. */
const ORIGIN = /^(https?|wss?):\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Flock</title></head>
<body><h1>Flock</h1><p>The web app is not built: run <code>node web/build.mjs</code> (npm ci does it).</p></body></html>
`;

/** The page's Content-Security-Policy for a request that reached us at `host`. */
export function webCsp(host: string | undefined, extra: readonly string[] = extraOrigins()): string {
  const connect = ["'self'"];
  if (host && HOST.test(host)) connect.push(`ws://${host}`, `wss://${host}`);
  for (const o of extra) {
    connect.push(o);
    if (o.startsWith("http")) connect.push(o.replace(/^http/, "ws"));
  }
  return (
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; font-src 'self'; ` +
    `connect-src ${connect.join(" ")}; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`
  );
}

function extraOrigins(): string[] {
  return (process.env["FLOCK_WEB_CONNECT"] ?? "").split(/\s+/).filter((o) => ORIGIN.test(o));
}

const SECURITY = { "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer" };

export const webRoutes: Route[] = (() => {
  const assets = new Map<string, Buffer>();
  return [
    defineRoute({
      method: "GET",
      path: "/",
      auth: "none",
      handle({ headers }): Reply {
        const file = join(DIST, "index.html");
        const data = existsSync(file) ? readFileSync(file) : NOT_BUILT;
        return {
          status: 200,
          raw: { type: "text/html; charset=utf-8", data },
          headers: { "Cache-Control": "no-cache", "Content-Security-Policy": webCsp(headers["host"]), ...SECURITY },
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/sw.js",
      auth: "none",
      handle({ headers }): Reply {
        // the service worker (web/sw.ts): at the root, so its scope is the whole app; never cached, so an update is seen
        const file = join(DIST, "sw.js");
        if (!existsSync(file)) throw notFound("file");
        return {
          status: 200,
          raw: { type: TYPES[".js"]!, data: readFileSync(file) },
          headers: { "Cache-Control": "no-cache", "Content-Security-Policy": webCsp(headers["host"]), ...SECURITY },
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: "/assets/:file",
      auth: "none",
      handle({ params }): Reply {
        const name = params["file"] ?? "";
        const type = Object.hasOwn(TYPES, extname(name)) ? TYPES[extname(name)] : undefined;
        if (!ASSET_NAME.test(name) || type === undefined) throw notFound("file");
        let data = assets.get(name);
        if (!data) {
          const file = join(DIST, "assets", name);
          if (!existsSync(file)) throw notFound("file");
          data = readFileSync(file);
          assets.set(name, data);
        }
        return {
          status: 200,
          raw: { type, data },
          headers: { "Cache-Control": "public, max-age=31536000, immutable", ...SECURITY },
        };
      },
    }),
  ];
})();
