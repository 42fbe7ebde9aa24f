// The node's blob store (built once by startNode, as svc.files): the local directory FILES_DIR (default DATA_DIR/files).
import { join } from "node:path";
import type { Config } from "../config.ts";
import { LocalBlobStore } from "./local.ts";
import type { BlobStore } from "./store.ts";

export function blobStore(config: Config): BlobStore {
  return new LocalBlobStore(config.FILES_DIR ?? join(config.DATA_DIR, "files"));
}
