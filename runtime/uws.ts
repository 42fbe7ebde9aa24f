// Loads uWebSockets.js and tells whether the native binding or the slow pure-JS fallback was loaded.
import { createRequire } from "node:module";
import type * as UwsNs from "uWebSockets.js";

export type Uws = typeof UwsNs;

const require = createRequire(import.meta.url);

export interface LoadedUws {
  uws: Uws;
  native: boolean;
  binding: string;
}

export function loadUws(): LoadedUws {
  const uws = require("uWebSockets.js") as Uws;
  const binding = Object.keys(require.cache).find((k) => /uws_[^/\\]+\.node$/.test(k));
  return { uws, native: binding !== undefined, binding: binding ?? "pure-JS fallback" };
}

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT, so a port another process holds fails to listen. */
const LISTEN_EXCLUSIVE_PORT = 1;

/**
 * Listen without sharing the port: uWS sets SO_REUSEPORT by default, so two nodes on one port both "listened" and
 * the kernel split the requests between them. The native binding takes the options argument; its typings omit it.
 */
export function listenExclusive(app: UwsNs.TemplatedApp, host: string, port: number): Promise<UwsNs.us_listen_socket | false> {
  type ListenWithOptions = (host: string, port: number, options: number, cb: (s: UwsNs.us_listen_socket | false) => void) => unknown;
  return new Promise((resolve) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LISTEN_EXCLUSIVE_PORT, (s) => resolve(s));
  });
}
