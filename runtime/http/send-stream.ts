// Writing a streamed response body (file downloads) with backpressure: each chunk goes out with tryEnd; when
// the socket is full the source is paused until uWS reports it writable again. A client that goes away
// destroys the source. Content-Length is the declared size (uWS writes it from tryEnd's total).
import type { Readable } from "node:stream";
import type { HttpResponse } from "uWebSockets.js";
import { statusLine } from "./respond.ts";
import { sendChunked } from "./send-chunked.ts";

export interface StreamedBody {
  type: string;
  /** Exact size of the body in bytes; undefined: unknown, written chunked as it comes (send-chunked.ts). */
  size?: number;
  body: Readable;
}

export interface StreamOut {
  status: number;
  headers: Record<string, string>;
  close: boolean;
  /** HEAD: the headers (with the body's length) only. */
  head: boolean;
  /** Register a callback for the client going away. */
  onAbort(cb: () => void): void;
}

export function sendStream(res: HttpResponse, out: StreamOut, streamed: StreamedBody): void {
  const { body, size } = streamed;
  if (size === undefined) return sendChunked(res, out, streamed);
  let gone = false;
  let done = false;
  out.onAbort(() => {
    gone = true;
    body.destroy();
  });
  const head = () => {
    res.writeStatus(statusLine(out.status));
    for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
    res.writeHeader("Content-Type", streamed.type);
  };
  if (size === 0 || out.head) {
    body.destroy();
    res.cork(() => {
      head();
      if (out.head) res.endWithoutBody(size, out.close);
      else res.end("", out.close);
    });
    return;
  }
  res.cork(head);

  let pending: Buffer | undefined;
  let pendingOffset = 0;
  let sourceEnded = false;
  /** The source ended before `size` bytes went out: the body can never complete, so cut the connection. */
  const shortSource = () => {
    if (!gone && !done) {
      done = true;
      res.close();
    }
  };
  const complete = () => {
    done = true;
    body.destroy();
  };
  const tryWrite = (chunk: Buffer): boolean => {
    let ok = false;
    res.cork(() => {
      const [written, finished] = res.tryEnd(chunk, size);
      ok = written;
      if (finished) complete();
    });
    return ok;
  };
  res.onWritable((offset) => {
    if (gone || done || !pending) return true;
    const rest = pending.subarray(offset - pendingOffset);
    const written = tryWrite(rest);
    if (written && !done) {
      pending = undefined;
      if (sourceEnded) shortSource();
      else body.resume();
    } else if (!written) {
      pending = rest;
      pendingOffset = offset;
    }
    return written;
  });
  body.on("data", (chunk: Buffer) => {
    if (gone || done) return;
    const offset = res.getWriteOffset();
    if (!tryWrite(chunk) && !done) {
      pending = chunk;
      pendingOffset = offset;
      body.pause();
    }
  });
  body.on("error", () => {
    // The source broke mid-body (file vanished, disk error): the status is already out, so cut the connection.
    if (!gone && !done) {
      done = true;
      res.close();
    }
  });
  body.on("end", () => {
    sourceEnded = true;
    if (!pending) shortSource();
  });
}
