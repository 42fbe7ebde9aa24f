// Builds the web app: esbuild bundles web/src/main.tsx (preact, the @flock/client SDK from its TypeScript source,
// the stylesheet it imports) into web/dist/assets/ under content-hashed names, writes web/dist/index.html pointing at
// them, and bundles the service worker web/sw.ts into web/dist/sw.js. Run by the root package's `prepare` script (so
// `npm ci` builds it) or `node web/build.mjs`.
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, "dist");

/**
 * Builds the app into `out` (default web/dist); answers the hashed asset names. The new assets are written beside
 * the old ones and index.html is swapped in by a rename, so a server reading web/dist meanwhile never sees a page
 * naming a missing file; `prune` then removes assets the new page no longer names.
 */
export async function buildWeb({ out = OUT, prune = false } = {}) {
  await mkdir(join(out, "assets"), { recursive: true });
  const result = await build({
    entryPoints: [join(HERE, "src/main.tsx")],
    outdir: join(out, "assets"),
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    minify: true,
    sourcemap: false,
    metafile: true,
    logLevel: "warning",
    // the SDK from its source, so the app never depends on client/dist being built first
    alias: { "@flock/client": resolve(HERE, "../client/index.ts") },
  });
  // the service worker (web/sw.ts): one classic script at the root, so its scope is the whole app; its name stays
  // the same (a browser checks that URL for updates), so it is written beside the page and swapped in by a rename too
  const swTmp = join(out, `.sw-${process.pid}.js`);
  await build({
    entryPoints: [join(HERE, "sw.ts")],
    outfile: swTmp,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    logLevel: "warning",
  });
  await rename(swTmp, join(out, "sw.js"));
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith(".js"));
  const css = outputs.find((f) => f.endsWith(".css"));
  if (!js || !css) throw new Error(`web build: missing outputs (${outputs.join(", ")})`);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>Flock</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${css}">
<script type="module" src="/assets/${js}"></script>
</head>
<body>
<div id="app"><noscript>Flock needs JavaScript.</noscript></div>
</body>
</html>
`;
  const tmp = join(out, `.index-${process.pid}.html`);
  await writeFile(tmp, html);
  await rename(tmp, join(out, "index.html"));
  if (prune) {
    for (const f of await readdir(join(out, "assets")))
      if (!outputs.includes(f)) await rm(join(out, "assets", f), { force: true });
  }
  return { js, css };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { js, css } = await buildWeb({ prune: true });
  console.log(`web: built web/dist (${js}, ${css})`);
}
