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
