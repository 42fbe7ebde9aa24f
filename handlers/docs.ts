// The published contract: GET /v1/openapi.json (OpenAPI 3.1, built once from the routes and schema/), GET
// /v1/asyncapi.json (the WebSocket, AsyncAPI 3), and the reference page at /docs rendered by swagger-ui from this
// node (no CDN): the page, its start-up script and swagger-ui's files under a versioned path, cached for good.
// The page's Content-Security-Policy allows only this origin (and data: images, which swagger-ui's CSS uses).
// Beside it, /docs/sdk/ serves the SDK reference (TypeDoc's HTML from the client's doc comments, built into
// dist/sdk-docs by `npm run build:docs`, part of the build that `npm ci` runs).
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { notFound } from "../runtime/errors.ts";
import { defineRoute, type Reply, type Route } from "../runtime/http/route.ts";
import { buildAsyncApiDocument } from "../schema/openapi/asyncapi.ts";
import { buildOpenApiDocument } from "../schema/openapi/document.ts";

const UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const UI_VERSION = (JSON.parse(readFileSync(join(UI_DIR, "package.json"), "utf8")) as { version: string }).version;
const ASSETS = `/docs/assets/${UI_VERSION}`;

/** The swagger-ui files the page may load, with their content types. */
const UI_FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui.css.map": "application/json",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-bundle.js.map": "application/json",
  "favicon-16x16.png": "image/png",
  "favicon-32x32.png": "image/png",
};

export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flock API reference</title>
<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSETS}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ASSETS}/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `// Renders /v1/openapi.json (the WebSocket protocol: /v1/asyncapi.json).
window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;

/** The SDK reference's folder: dist/sdk-docs beside the sources (run from source) or beside dist/handlers (built). */
const SDK_DIR = [
  fileURLToPath(new URL("../dist/sdk-docs", import.meta.url)),
  fileURLToPath(new URL("../sdk-docs", import.meta.url)),
].find((d) => existsSync(join(d, "index.html")));
/** TypeDoc's output folders (one level deep) and file types; anything else is 404. */
const SDK_DIRS = new Set([
  "assets",
  "classes",
  "functions",
  "interfaces",
  "modules",
  "types",
  "variables",
  "enums",
  "namespaces",
  "media",
]);
const SDK_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};
/** TypeDoc's pages run its own scripts and inline styles: still this origin only, no network beyond it. */
const SDK_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";
const SDK_HEADERS = {
  "Cache-Control": "no-cache",
  "Content-Security-Policy": SDK_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/** A file of the SDK reference, or 404 (an unknown name, a name with a path in it, or no reference built). */
function sdkFile(dir: string | undefined, file: string): Reply {
  const type = SDK_TYPES[extname(file)];
  if (
    SDK_DIR === undefined ||
    type === undefined ||
    !/^[\w.-]+$/.test(file) ||
    file.startsWith(".") ||
    (dir !== undefined && !SDK_DIRS.has(dir))
  ) {
    throw notFound(SDK_DIR === undefined ? "SDK reference (not built here: npm run build:docs)" : "file");
  }
  const path = dir === undefined ? join(SDK_DIR, file) : join(SDK_DIR, dir, file);
  if (!existsSync(path)) throw notFound("file");
  const data = readFileSync(path);
  if (extname(file) !== ".html") return text(type, data, SDK_HEADERS);
  // the index is also served at /docs/sdk (no slash), where its relative links need a base to resolve; every page
  // names an empty icon, so the browser asks for no /favicon.ico (a 404 in the console)
  const base = dir === undefined && file === "index.html" ? '<base href="/docs/sdk/">' : "";
  const html = data.toString("utf8").replace("<head>", `<head>${base}<link rel="icon" href="data:,">`);
  return text(type, html, { ...SDK_HEADERS, "Content-Security-Policy": sdkCsp(html) });
}

/**
 * The policy for one page of the reference: TypeDoc's pages carry an inline script (the theme, set before the page
 * shows), which 'self' alone blocks (a console error, and the page shown late): each is allowed by its hash.
 */
function sdkCsp(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash("sha256")
        .update(m[1] ?? "")
        .digest("base64")}'`,
  );
  return SDK_CSP.replace("script-src 'self'", ["script-src 'self'", ...new Set(hashes)].join(" "));
}

const PAGE_HEADERS = {
  "Cache-Control": "no-cache",
  "Content-Security-Policy": DOCS_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

const text = (type: string, data: string | Buffer, headers: Record<string, string>): Reply => ({
  status: 200,
  raw: { type, data },
  headers,
});

/** Computes `make()` on first use and keeps it. */
function once<T>(make: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
}

/** The doc routes; the documents describe `others` and these. */
export function docRoutes(others: readonly Route[]): Route[] {
  const mine: Route[] = [];
  const openapiJson = once(() => JSON.stringify(buildOpenApiDocument([...others, ...mine])));
  const asyncapiJson = once(() => JSON.stringify(buildAsyncApiDocument()));
  const files = new Map<string, Buffer>();

  mine.push(
    defineRoute({
      method: "GET",
      path: "/v1/openapi.json",
      auth: "none",
      handle: () => text("application/json", openapiJson(), { "Cache-Control": "no-cache" }),
    }),
    defineRoute({
      method: "GET",
      path: "/v1/asyncapi.json",
      auth: "none",
      handle: () => text("application/json", asyncapiJson(), { "Cache-Control": "no-cache" }),
    }),
    defineRoute({
      method: "GET",
      path: "/docs",
      auth: "none",
      handle: () => text("text/html; charset=utf-8", PAGE, PAGE_HEADERS),
    }),
    defineRoute({
      method: "GET",
      path: "/docs/init.js",
      auth: "none",
      handle: () => text("text/javascript; charset=utf-8", INIT, PAGE_HEADERS),
    }),
    defineRoute({ method: "GET", path: "/docs/sdk", auth: "none", handle: () => sdkFile(undefined, "index.html") }),
    defineRoute({
      method: "GET",
      path: "/docs/sdk/:file",
      auth: "none",
      handle: ({ params }) => sdkFile(undefined, params["file"] ?? ""),
    }),
    defineRoute({
      method: "GET",
      path: "/docs/sdk/:dir/:file",
      auth: "none",
      handle: ({ params }) => sdkFile(params["dir"], params["file"] ?? ""),
    }),
    defineRoute({
      method: "GET",
      path: "/docs/assets/:version/:file",
      auth: "none",
      handle({ params }) {
        const name = params["file"] ?? "";
        const type = Object.hasOwn(UI_FILES, name) ? UI_FILES[name] : undefined;
        if (params["version"] !== UI_VERSION || type === undefined) throw notFound("file");
        let data = files.get(name);
        if (!data) {
          data = readFileSync(join(UI_DIR, name));
          files.set(name, data);
        }
        return text(type, data, {
          "Cache-Control": "public, max-age=31536000, immutable",
          "X-Content-Type-Options": "nosniff",
        });
      },
    }),
  );
  return mine;
}
