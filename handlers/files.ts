// Files: upload (raw body or multipart/form-data, streamed, capped while it streams) and download (streamed
// to the owner and to those a kept message carrying it reaches: runtime/files/records-store.ts; 404 for everyone else).
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { receiveUpload } from "../runtime/files/intake.ts";
import { publishFile } from "../runtime/files/records.ts";
import { toFileObject, visibleFile } from "../runtime/files/records-store.ts";
import { UploadQuery } from "../schema/files.ts";

const upload = defineRoute({
  method: "POST",
  path: "/v1/files/upload",
  idempotent: true,
  auth: "principal",
  scope: "messages:write",
  query: UploadQuery,
  limit: "upload",
  stream: true,
  async handle({ principal, query, headers, stream, svc, once }) {
    const store = svc.files;
    const received = await receiveUpload(store, stream!, headers, query.name);
    try {
      // under an Idempotency-Key, the request is the file: its bytes (their SHA-256, taken as they streamed in), its
      // name and type; a multipart form sent again (another boundary) with the same file is the same request
      return await once([received.sha256, received.name, received.contentType], async () =>
        created(toFileObject(await publishFile(svc, store, principal.id, received))),
      );
    } finally {
      await received.staged.discard(); // nothing to do once published
    }
  },
});

const download = defineRoute({
  method: "GET",
  path: "/v1/files/:id",
  auth: "principal",
  scope: "read",
  async handle({ principal, params, svc, log }) {
    const raw = parseId("file", params["id"] ?? "");
    const file = raw === null ? null : await visibleFile(svc.sql, raw, principal.id, svc.horizons.messages());
    if (!file) throw notFound("file");
    const blob = await svc.files.open(file.sha256);
    if (!blob) {
      log.error({ file: file.id.toString(), sha256: file.sha256 }, "file row without its blob");
      throw notFound("file");
    }
    const image = file.content_type.startsWith("image/");
    return {
      status: 200,
      stream: { type: file.content_type, size: blob.size, body: blob.stream },
      headers: {
        "Content-Disposition": `${image ? "inline" : "attachment"}; filename*=UTF-8''${rfc5987(file.name)}`,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'",
        "Cache-Control": "private, max-age=3600",
        ETag: `"${file.sha256}"`,
      },
    };
  },
});

/** A filename as an RFC 5987 ext-value (percent-encoded UTF-8, attr-chars only). */
function rfc5987(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const fileRoutes: Route[] = [upload, download];
