// Writing a response: status line, headers and body inside one cork, never after an abort.
import type { HttpResponse } from "uWebSockets.js";

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** Every answer, whoever writes it: a browser must never guess a type other than the one sent. */
export const NOSNIFF = "X-Content-Type-Options";

export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? "Unknown"}`;
}

export interface Outgoing {
  status: number;
  headers: Record<string, string>;
  /** Already-serialized body; undefined for an empty body. */
  body?: string | Buffer;
  /** Close the connection after this response (a body left unread, or the node is draining). */
  close?: boolean;
  /** HEAD request: headers only. */
  head?: boolean;
}

export function write(res: HttpResponse, out: Outgoing): void {
  res.cork(() => {
    res.writeStatus(statusLine(out.status));
    for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
    if (out.headers[NOSNIFF] === undefined) res.writeHeader(NOSNIFF, "nosniff");
    if (out.status === 204 || out.status === 304) {
      // No arguments: no Content-Length. (This uWS build writes `Content-Length: 2^63` for an explicit
      // undefined, which leaves clients' keep-alive sockets hanging.)
      if (out.close) res.endWithoutBody(0, true);
      else res.endWithoutBody();
    } else if (out.head) {
      res.endWithoutBody(out.body === undefined ? 0 : Buffer.byteLength(out.body), out.close ?? false);
    } else {
      res.end(out.body ?? "", out.close ?? false);
    }
  });
}
