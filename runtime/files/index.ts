// The node's blob store, built once per configuration: the local directory FILES_DIR (default DATA_DIR/files).
import { join } from "node:path";
import type { Config } from "../config.ts";
import { LocalBlobStore } from "./local.ts";
import type { BlobStore } from "./store.ts";

const stores = new WeakMap<Config, BlobStore>();

export function fileStore(config: Config): BlobStore {
  let store = stores.get(config);
  if (!store) {
    store = new LocalBlobStore(config.FILES_DIR ?? join(config.DATA_DIR, "files"));
    stores.set(config, store);
  }
  return store;
}
