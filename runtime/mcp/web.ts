// Between the uWS pipeline and the MCP SDK's web-standard transport: a handler's context becomes a fetch Request,
// and the transport's Response becomes a Reply. An event stream (text/event-stream) is streamed as it comes
// (runtime/http/send-chunked.ts); an error answer is put in Flock's one error shape, keeping its status.
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { Ctx, Reply } from "../http/route.ts";
import { publicUrl } from "../public-url.ts";

/** Headers the transport reads. */
const PASSED = ["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id", "host", "origin"];

export function toRequest(ctx: Ctx, path = "/v1/mcp"): Request {
  const headers = new Headers();
  for (const h of PASSED) {
    const v = ctx.headers[h];
    if (v !== undefined) headers.set(h, v);
  }
  // the URL the transport records names the configured public URL, never the request's Host (runtime/public-url.ts)
  return new Request(publicUrl(ctx.svc.config, ctx.svc.self, path), { method: ctx.method, headers });
}

const CODES: Record<number, string> = {
  400: "invalid_request",
  404: "not_found",
  405: "method_not_allowed",
  406: "not_acceptable",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

export async function toReply(res: Response): Promise<Reply> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (k !== "content-type" && k !== "content-length") headers[k] = v;
  });
  const type = res.headers.get("content-type") ?? "";
  if (res.status >= 400) {
    const text = await res.text();
    let rpc: { error?: { code?: number; message?: string } } = {};
    try {
      rpc = JSON.parse(text) as typeof rpc;
    } catch {
      // not JSON: the text itself is the message
    }
    const message = rpc.error?.message ?? (text || `HTTP ${res.status}`);
    const status = res.status >= 500 ? 503 : res.status;
    return {
      status,
      headers,
      body: {
        error: CODES[status] ?? (status >= 500 ? "unavailable" : "invalid_request"),
        message,
        jsonrpc_code: rpc.error?.code,
      },
    };
  }
  if (type.startsWith("text/event-stream") && res.body) {
    headers["X-Accel-Buffering"] = "no";
    const body = Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>);
    return { status: res.status, headers, stream: { type: "text/event-stream", body } };
  }
  const text = await res.text();
  if (!text) return { status: res.status, headers };
  return { status: res.status, headers, raw: { type: type || "application/json", data: text } };
}
