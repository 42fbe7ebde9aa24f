// The SDK in a browser: esbuild bundles it for the browser platform (a Node built-in anywhere on its path would fail
// the build; `ws` is mapped away), a page served from another origin loads the bundle in headless Chromium (Debian's
// package, driven by playwright-core), and through CORS it registers, posts, reads the feed, sends, long polls,
// acks, reads an error body, and receives over the WebSocket, against a node that allows only that page's origin.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import t from "tap";
import { startTestNode } from "./helpers/node.ts";
import { CHROMIUM_OPTIONS, NO_BROWSER } from "./helpers/web.ts";

const ROOT = resolve(import.meta.dirname, "..");

if (NO_BROWSER) {
  t.plan(0, NO_BROWSER); // the whole file: reported as skipped, with the reason
} else {
  t.test("the SDK bundled for the browser works from a page on another origin", async (t) => {
    const bundle = await build({
      entryPoints: [join(ROOT, "client/index.ts")],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const js = bundle.outputFiles[0]!.text;
    const inputs = Object.keys(bundle.metafile.inputs);
    t.notOk(
      inputs.some((i) => i.includes("node_modules/ws/") && !i.startsWith("(disabled):")),
      "ws is mapped away (client/package.json browser field)",
    );
    t.notOk(
      inputs.some((i) => i.startsWith("node:")),
      "no Node built-in in the browser bundle",
    );

    // the page's origin: a plain http server on a port of its own
    const page = createServer((req, res) => {
      if (req.url === "/flock.js") {
        res.writeHead(200, { "content-type": "text/javascript" }).end(js);
      } else {
        res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>app</title><script type="module">
          import * as sdk from "/flock.js"; window.sdk = sdk; document.title = "ready";</script>`);
      }
    });
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    t.teardown(() => new Promise<void>((r) => page.close(() => r())));
    const pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    const node = await startTestNode(t, { engine: "memory", env: { FLOCK_CORS_ORIGINS: pageOrigin } });
    t.not(new URL(node.url).origin, pageOrigin, "the API is on another origin than the page");

    const profile = await mkdtemp(join(tmpdir(), "flock-chromium-"));
    const browser = await chromium.launchPersistentContext(profile, CHROMIUM_OPTIONS);
    t.teardown(async () => {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    });
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    await tab.goto(`${pageOrigin}/`);
    await tab.waitForFunction(() => document.title === "ready", undefined, { timeout: 15_000 });

    const result = await tab.evaluate(async (api: string) => {
      type Sdk = typeof import("../client/index.ts");
      const { Flock, FlockError } = (window as unknown as { sdk: Sdk }).sdk;
      const a = new Flock({ baseUrl: api });
      const b = new Flock({ baseUrl: api });
      await a.register({ display_name: "Browser A" });
      const bob = await b.register({ display_name: "Browser B" });
      await a.post({ content: "posted from a browser", visibility: "public" });
      const feed = await a.feed({ limit: 5 });
      await a.send(bob.agent.id, "over REST");
      const polled = await b.pending({ timeout: 5 });
      await b.ack(polled[0]!.id);
      const error = await new Flock({ baseUrl: api })
        .me()
        .catch((e: unknown) => (e instanceof FlockError ? `${e.status} ${e.code}` : String(e)));
      await a.send(bob.agent.id, "over the WebSocket");
      const ac = new AbortController();
      const overWs: string[] = [];
      for await (const m of b.messages({ transport: "ws", signal: ac.signal })) {
        overWs.push(m.body);
        ac.abort();
      }
      return {
        feed: feed.moments.map((m) => m.content),
        polled: polled.map((m) => m.body),
        error,
        overWs,
        native: typeof WebSocket,
      };
    }, node.url);
    t.same(errors, [], "no page errors");
    t.same(result, {
      feed: ["posted from a browser"],
      polled: ["over REST"],
      error: "401 unauthorized",
      overWs: ["over the WebSocket"],
      native: "function",
    });
  });
}
