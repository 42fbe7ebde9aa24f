// Receiving an upload: a raw body (its Content-Type) or multipart/form-data (the part named `file`), streamed
// into a staged blob with backpressure. Images (recognised by their bytes) may be 10 MiB, anything else 50 MiB;
// the upload is refused with 413 the moment it crosses its cap, and a refused or aborted upload is discarded.
import type { Readable } from "node:stream";
import busboy from "busboy";
import { ApiError, invalid } from "../errors.ts";
import { ClientAbortedError } from "../http/stream.ts";
import { STRIPPED_FROM_FILE_NAMES } from "../../schema/files.ts";
import { SNIFF_BYTES, sniffImage } from "./sniff.ts";
import type { BlobStore, StagedBlob } from "./store.ts";

const IMAGE_CAP = 10 * 1024 * 1024;
const FILE_CAP = 50 * 1024 * 1024;
/** Room for multipart boundaries, part headers and small fields around the file. */
const MULTIPART_SLACK = 1024 * 1024;

export interface Received {
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  /** Finished, not yet published: the caller commits or discards it. */
  staged: StagedBlob;
}

const tooLarge = (image: boolean) =>
  new ApiError(
    "payload_too_large",
    image ? `images are limited to ${IMAGE_CAP} bytes (10 MiB)` : `files are limited to ${FILE_CAP} bytes (50 MiB)`,
    { limit: image ? IMAGE_CAP : FILE_CAP },
  );

const aborted = () => new ApiError("invalid_request", "the upload was aborted by the client");

/** Reads the upload from `body` and answers the staged blob; throws 400/413 (nothing left behind). */
export async function receiveUpload(
  store: BlobStore,
  body: Readable,
  headers: Record<string, string>,
  queryName: string | undefined,
): Promise<Received> {
  const declared = headers["content-type"] ?? "";
  const length = headers["content-length"] === undefined ? undefined : Number(headers["content-length"]);
  if (/^multipart\/form-data\b/i.test(declared)) {
    if (length !== undefined && length > FILE_CAP + MULTIPART_SLACK) throw tooLarge(false);
    return readMultipart(body, declared, (file, info) =>
      intoBlob(store, file, info.filename || queryName, info.mimeType, undefined),
    );
  }
  if (length !== undefined && length > FILE_CAP) throw tooLarge(false);
  try {
    return await intoBlob(store, body, queryName, declared, length);
  } catch (err) {
    throw err instanceof ClientAbortedError ? aborted() : err;
  }
}

/** Streams one file's bytes into a staged blob, enforcing the cap as the bytes arrive. */
async function intoBlob(
  store: BlobStore,
  source: AsyncIterable<Buffer>,
  name: string | undefined,
  declaredType: string,
  exactLength: number | undefined,
): Promise<Received> {
  const staged = await store.stage();
  try {
    let head = Buffer.alloc(0);
    let image: string | null | undefined; // undefined until enough bytes arrived to tell
    let size = 0;
    for await (const chunk of source) {
      size += chunk.length;
      if (image === undefined) {
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        if (head.length >= SNIFF_BYTES) image = sniffImage(head);
      }
      // A raw body announces its length: an image announced over its cap is refused before it is read.
      if (image && exactLength !== undefined && exactLength > IMAGE_CAP) throw tooLarge(true);
      if (size > (image ? IMAGE_CAP : FILE_CAP)) throw tooLarge(Boolean(image));
      await staged.write(chunk);
    }
    if (image === undefined) image = sniffImage(head);
    if (size === 0) throw invalid("the file is empty", { field: "file" });
    const { sha256 } = await staged.finish();
    return { name: cleanName(name), contentType: image ?? otherType(declaredType), size, sha256, staged };
  } catch (err) {
    await staged.discard();
    throw err;
  }
}

/** The declared type of a file that is not a recognised image; a claim to be an image is not believed. */
function otherType(declared: string): string {
  const essence = declared.split(";")[0]!.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(essence)) {
    return "application/octet-stream";
  }
  if (essence.startsWith("image/") || essence.startsWith("multipart/")) return "application/octet-stream";
  return essence;
}

function cleanName(name: string | undefined): string {
  const base = (name ?? "").split(/[/\\]/).pop()!.replace(STRIPPED_FROM_FILE_NAMES, "").trim();
  // 255 UTF-16 units at most, never half a surrogate pair (which would be stored as U+FFFD)
  const cut = base.length > 255 && /[\ud800-\udbff]/.test(base[254]!) ? 254 : 255;
  return base.slice(0, cut) || "upload";
}

interface PartInfo {
  filename: string;
  mimeType: string;
}

/**
 * Parses multipart/form-data with busboy and hands the first part named `file` to `onFile`; every other part
 * is read and dropped. Resolves with onFile's result once the whole body is read; a failure of onFile (413)
 * stops reading at once. The whole body is capped too, so other parts cannot carry an unbounded upload.
 */
function readMultipart<T>(
  src: Readable,
  contentType: string,
  onFile: (file: Readable, info: PartInfo) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { "content-type": contentType },
        // browsers and fetch send a file name as raw UTF-8 in `filename="..."` (busboy reads it as latin1 by default)
        defParamCharset: "utf8",
        limits: { fields: 20, fieldSize: 64 * 1024, parts: 30, headerPairs: 20 },
      });
    } catch {
      reject(invalid("malformed multipart/form-data Content-Type (boundary missing?)"));
      return;
    }
    let result: Promise<T> | undefined;
    let file: Readable | undefined;
    let settled = false;
    let total = 0;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      const out = err instanceof ClientAbortedError ? aborted() : err instanceof ApiError ? err : malformed(err);
      src.unpipe(bb);
      src.destroy();
      file?.destroy(out); // stops onFile, which discards what it staged
      // Reject only once onFile has cleaned up, so nothing is left behind when the error is answered.
      void (result ?? Promise.resolve()).catch(() => {}).then(() => reject(out));
    };
    bb.on("file", (name: string, stream: Readable, info: PartInfo) => {
      if (name !== "file" || result) {
        stream.resume();
        return;
      }
      file = stream;
      result = onFile(stream, info);
      result.catch(fail);
    });
    bb.on("error", fail);
    bb.on("close", () => {
      if (settled) return;
      if (!result) {
        fail(invalid('multipart body has no part named "file"', { field: "file" }));
        return;
      }
      result.then((v) => {
        settled = true;
        resolve(v);
      }, fail);
    });
    src.on("data", (chunk: Buffer) => {
      total += chunk.length;
      if (total > FILE_CAP + MULTIPART_SLACK) fail(tooLarge(false));
    });
    src.on("error", fail);
    src.pipe(bb);
  });
}

function malformed(err: unknown): ApiError {
  const why = err instanceof Error ? err.message : String(err);
  return invalid(`malformed multipart/form-data body: ${why}`);
}
