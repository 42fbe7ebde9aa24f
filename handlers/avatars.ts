// Avatars: the picture a principal chose, at the public address its author objects carry. No credentials are asked
// (a plain <img> shows it); the address names a random key, so only those shown an author object learn it.
import { avatarByKey } from "../runtime/accounts/avatars-store.ts";
import { notFound } from "../runtime/errors.ts";
import { defineRoute, type Route } from "../runtime/http/route.ts";

const avatar = defineRoute({
  method: "GET",
  path: "/v1/avatars/:key",
  auth: "none",
  async handle({ params, headers, svc, log }) {
    const found = await avatarByKey(svc.sql, params["key"] ?? "");
    if (!found) throw notFound("avatar");
    const etag = `"${found.sha256}"`;
    // the key stays when the picture changes: caches keep it a few minutes, then ask again with the tag
    const cache = { ETag: etag, "Cache-Control": "public, max-age=300" };
    if (headers["if-none-match"] === etag) return { status: 304, headers: cache };
    const blob = await svc.files.open(found.sha256);
    if (!blob) {
      log.error({ sha256: found.sha256 }, "avatar without its blob");
      throw notFound("avatar");
    }
    return {
      status: 200,
      stream: { type: found.content_type, size: blob.size, body: blob.stream },
      headers: {
        ...cache,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'",
        "Cross-Origin-Resource-Policy": "cross-origin",
      },
    };
  },
});

export const avatarRoutes: Route[] = [avatar];
