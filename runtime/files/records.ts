// A file's record and its blob together: publishing an upload (its row and its blob in one transaction, so there is
// never one without the other) and removing the blobs no file names any more. Both take the blob's advisory lock, so
// a blob is never removed while a new row starts to name it. The statements: records-store.ts.
import type { Services } from "../services.ts";
import type { Received } from "./intake.ts";
import { blobNamed, type FileRow, insertFile, lockBlob } from "./records-store.ts";
import type { BlobStore } from "./store.ts";

/** Records an upload for its owner and publishes its blob, in one transaction. */
export async function publishFile(svc: Services, store: BlobStore, owner: string, up: Received): Promise<FileRow> {
  const id = svc.ids.nextRaw();
  return svc.sql.begin(async (tx) => {
    await lockBlob(tx, up.sha256);
    const row = await insertFile(tx, {
      id,
      owner,
      name: up.name,
      contentType: up.contentType,
      size: up.size,
      sha256: up.sha256,
      createdAt: new Date(svc.now()),
    });
    await up.staged.commit(); // a failure rolls the row back
    return row;
  });
}

/** Removes each of these blobs that no file names any more (each under its lock, in a transaction of its own). */
export async function removeUnreferencedBlobs(svc: Services, store: BlobStore, shas: string[]): Promise<void> {
  for (const sha of new Set(shas)) {
    await svc.sql.begin(async (tx) => {
      await lockBlob(tx, sha);
      if (!(await blobNamed(tx, sha))) await store.remove(sha);
    });
  }
}
