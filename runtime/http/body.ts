// Streams a request body with a hard cap: refused the moment it crosses the cap, never buffered beyond it.
// Must be called synchronously inside the uWS handler (before any await). A client that goes away before its body
// has arrived rejects it too: uWS sends no more data then, and a request waiting for it would never end (nor would
// the node's drain, which waits for every request in flight).
import type { HttpResponse } from "uWebSockets.js";
import { ApiError } from "../errors.ts";

export function readBody(res: HttpResponse, limit: number, onAbort: (cb: () => void) => void): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const p = new Promise<Buffer>((resolve, reject) => {
    onAbort(() => {
      if (done) return;
      done = true;
      reject(new ApiError("invalid_request", "the client closed the connection before its body arrived"));
    });
    res.onData((ab, isLast) => {
      if (done) return;
      size += ab.byteLength;
      if (size > limit) {
        done = true;
        reject(new ApiError("payload_too_large", `request body exceeds ${limit} bytes`, { limit }));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      if (ab.byteLength > 0) chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    });
  });
  p.catch(() => {}); // observed later by the pipeline; never an unhandled rejection
  return p;
}
