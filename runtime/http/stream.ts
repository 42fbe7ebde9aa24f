// A request body as a Node Readable with backpressure: uWS is paused while the consumer lags, so memory stays
// bounded however large the upload. Must be created synchronously inside the uWS handler.
import { Readable } from "node:stream";
import type { HttpResponse } from "uWebSockets.js";

export class ClientAbortedError extends Error {
  constructor() {
    super("client aborted the request");
  }
}

export function bodyStream(res: HttpResponse, onAbort: (cb: () => void) => void): Readable {
  let paused = false;
  let ended = false;
  const stream = new Readable({
    highWaterMark: 256 * 1024,
    read() {
      if (paused && !ended) {
        paused = false;
        res.resume();
      }
    },
  });
  res.onData((ab, isLast) => {
    if (stream.destroyed) return;
    // uWS reuses the chunk's memory after this callback returns: copy it.
    if (ab.byteLength > 0 && !stream.push(Buffer.from(ab.slice(0))) && !isLast) {
      paused = true;
      res.pause();
    }
    if (isLast) {
      ended = true;
      // uWS can deliver the rest of a read buffer after pause(): never leave a finished request's socket
      // paused, or the next request on this kept-alive connection is never read.
      if (paused) {
        paused = false;
        res.resume();
      }
      stream.push(null);
    }
  });
  onAbort(() => {
    if (!ended) stream.destroy(new ClientAbortedError());
  });
  return stream;
}
