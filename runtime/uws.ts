// Loads uWebSockets.js: picks the native build that runs on this Node and OS, and refuses anything else, the slow
// pure-JS fallback of the v20.30 package included (it cannot serve Flock: its request object breaks on the first query).
import { createRequire } from "node:module";
import type * as UwsNs from "uWebSockets.js";

type Uws = typeof UwsNs;

const require = createRequire(import.meta.url);

/** The two builds in package.json: v20.57 (Node 20, 22, 24, 25; on Linux, glibc >= 2.38) and v20.30 (Node 16-20, glibc >= 2.27). */
export const UWS_CURRENT = "uWebSockets.js";
export const UWS_NODE20_OLD_GLIBC = "uws-node20-glibc236";

/** Node's module ABI of each major the v20.57 build ships binaries for. */
const CURRENT_ABIS: Record<string, number> = { "115": 20, "127": 22, "137": 24, "141": 25 };
const NODE20_ABI = "115";
/** A request's line and headers together, at most (UWS_HTTP_MAX_HEADERS_SIZE, when not set already). */
const UWS_MAX_HEADERS_BYTES = 64 * 1024;
const CURRENT_PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"];
const OLD_PLATFORMS = ["linux-x64", "linux-arm64", "linux-arm"];

export interface Platform {
  platform: string;
  arch: string;
  /** process.versions.modules */
  abi: string;
  /** glibc at run time, as "2.36"; undefined off Linux or on musl */
  glibc: string | undefined;
  node: string;
}

type UwsChoice = { package: string } | { error: string };

const SUPPORTED =
  "Flock runs on Node 20, 22, 24 or 25 on Linux x64 or arm64 with glibc >= 2.38 (Debian 13, Ubuntu 24.04 and later), " +
  "macOS or Windows x64, and on Node 20 alone on Linux with glibc 2.27 to 2.37 (Debian 12)";

function glibcAtLeast(glibc: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = glibc.split(".").map(Number);
  return a > major || (a === major && b >= minor);
}

/** Which build runs here, or one line saying which Node and OS combination does. */
export function chooseUws(p: Platform): UwsChoice {
  const key = `${p.platform}-${p.arch}`;
  const here = `Node ${p.node} on ${key}${p.platform === "linux" ? (p.glibc ? ` with glibc ${p.glibc}` : " without glibc (musl?)") : ""}`;
  const currentFits = p.abi in CURRENT_ABIS && CURRENT_PLATFORMS.includes(key);
  if (currentFits && (p.platform !== "linux" || (p.glibc !== undefined && glibcAtLeast(p.glibc, 2, 38)))) {
    return { package: UWS_CURRENT };
  }
  if (
    p.platform === "linux" &&
    p.glibc !== undefined &&
    glibcAtLeast(p.glibc, 2, 27) &&
    p.abi === NODE20_ABI &&
    OLD_PLATFORMS.includes(key)
  ) {
    return { package: UWS_NODE20_OLD_GLIBC };
  }
  return { error: `uWebSockets.js has no native build for ${here}. ${SUPPORTED}.` };
}

let here: Platform | undefined;

/** This process's platform (read once: process.report builds a whole report). */
export function thisPlatform(): Platform {
  if (here) return here;
  const report =
    process.platform === "linux"
      ? (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })
      : undefined;
  here = {
    platform: process.platform,
    arch: process.arch,
    abi: process.versions.modules,
    glibc: report?.header?.glibcVersionRuntime,
    node: process.versions.node,
  };
  return here;
}

export interface LoadedUws {
  uws: Uws;
  /** the native binding's file */
  binding: string;
  /** the package it came from */
  build: string;
}

/** The native build for this platform; throws one line naming what works when there is none, or when it fell back. */
export function loadUws(platform: Platform = thisPlatform()): LoadedUws {
  const choice = chooseUws(platform);
  if ("error" in choice) throw new Error(choice.error);
  // v20.57 reads its limit on a request's line and headers from the environment once, as the binding loads (4 KB
  // by default, answered with its own HTML 431): Flock takes up to 64 KB, so that a long query gets Flock's JSON
  // error rather than uWS's page (v20.30 ignores the variable and takes about 128 KB)
  process.env["UWS_HTTP_MAX_HEADERS_SIZE"] ??= String(UWS_MAX_HEADERS_BYTES);
  const uws = require(choice.package) as Uws; // v20.30 falls back to its JS implementation when its binary fails
  const binding = Object.keys(require.cache).find((k) => /uws_[^/\\]+\.node$/.test(k));
  if (binding === undefined) {
    throw new Error("uWebSockets.js native binding did not load; refusing to run on the slow pure-JS fallback");
  }
  return { uws, binding, build: choice.package };
}

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT, so a port another process holds fails to listen. */
const LISTEN_EXCLUSIVE_PORT = 1;

/**
 * Listen without sharing the port: uWS sets SO_REUSEPORT by default, so two nodes on one port both "listened" and
 * the kernel split the requests between them. The native binding takes the options argument; its typings omit it.
 */
export function listenExclusive(
  app: UwsNs.TemplatedApp,
  host: string,
  port: number,
): Promise<UwsNs.us_listen_socket | false> {
  type ListenWithOptions = (
    host: string,
    port: number,
    options: number,
    cb: (s: UwsNs.us_listen_socket | false) => void,
  ) => unknown;
  return new Promise((resolve) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LISTEN_EXCLUSIVE_PORT, (s) => resolve(s));
  });
}
