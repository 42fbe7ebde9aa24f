// The files a send attaches: the ids given, checked against the sender's own uploads and turned into the metadata
// the message keeps (runtime/messaging/payload.ts). Someone else's file and one that does not exist are refused
// alike, so the answer never tells whether another's file exists. Sharing with the recipients happens in the
// statement that stores the message (runtime/messaging/messages-store.ts).
import type { Sql } from "../db/client.ts";
import { invalid } from "../errors.ts";
import { ownFiles } from "../files/records-store.ts";
import { PREFIX, parseId } from "../ids.ts";
import type { StoredAttachment } from "./payload.ts";

/**
 * The attachments for ids given by `sender` (in the order given, each once), or a 400 `invalid_request` with
 * `field: "attachments"` naming the ids that are not the sender's files. Nothing is written.
 */
export async function resolveAttachments(
  sql: Sql,
  sender: string,
  ids: string[] | undefined,
): Promise<StoredAttachment[]> {
  if (ids === undefined || ids.length === 0) return [];
  const given = [...new Set(ids)];
  const raw = given.map((id) => parseId("file", id));
  const rows = await ownFiles(
    sql,
    sender,
    raw.filter((r): r is bigint => r !== null),
  );
  const byId = new Map(rows.map((r) => [r.id.toString(), r]));
  const missing = given.filter((_, i) => raw[i] === null || !byId.has(raw[i]!.toString()));
  if (missing.length > 0) {
    throw invalid(
      `attachments: not files you uploaded (attach only your own, from POST /v1/files/upload): ${missing.join(", ")}`,
      {
        field: "attachments",
        missing,
      },
    );
  }
  return raw.map((r) => {
    const f = byId.get(r!.toString())!;
    return { id: PREFIX.file + f.id.toString(), name: f.name, content_type: f.content_type, size: Number(f.size) };
  });
}
