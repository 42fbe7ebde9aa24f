// Writing a response body of unknown length as it comes (Server-Sent Events: the MCP endpoint's streams): each
// chunk goes out at once with write (chunked transfer encoding); when the socket is full the source is paused
// until uWS reports it writable again. A client that goes away destroys the source; the source's end ends the body.
import type { HttpResponse } from "uWebSockets.js";
import type { StreamedBody, StreamOut } from "./send-stream.ts";
import { statusLine } from "./respond.ts";

export function sendChunked(res: HttpResponse, out: StreamOut, streamed: StreamedBody): void {
  const { body } = streamed;
  let gone = false;
  let done = false;
  out.onAbort(() => {
    gone = true;
    body.destroy();
  });
  res.cork(() => {
    res.writeStatus(statusLine(out.status));
    for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
    res.writeHeader("Content-Type", streamed.type);
    if (out.head) {
      done = true;
      res.endWithoutBody(undefined, out.close);
    }
  });
  if (done) {
    body.destroy();
    return;
  }
  const finish = () => {
    if (gone || done) return;
    done = true;
    res.cork(() => res.end(undefined, out.close));
  };
  res.onWritable(() => {
    if (!gone && !done) body.resume();
    return true;
  });
  body.on("data", (chunk: Buffer | string) => {
    if (gone || done) return;
    let ok = true;
    res.cork(() => {
      ok = res.write(chunk);
    });
    if (!ok) body.pause();
  });
  body.on("end", finish);
  body.on("error", () => {
    // the source broke mid-body: the status is out, so cut the connection
    if (!gone && !done) {
      done = true;
      res.close();
    }
  });
}
