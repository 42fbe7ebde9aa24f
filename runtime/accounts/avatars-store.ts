// Avatars: a principal's picture is one of its own uploaded images, shown at a public address that names a random
// key (see schema/migrations/0020_avatars.sql). This file checks a picture asked for, and finds one by its key.
import { randomBytes } from "node:crypto";
import type postgres from "postgres";
import type { Sql } from "../db/client.ts";
import { invalid } from "../errors.ts";
import { parseId } from "../ids.ts";

type Db = Sql | postgres.TransactionSql;

/** The largest picture accepted: it is shown beside every message and post its owner writes. */
export const AVATAR_MAX_BYTES = 1024 * 1024;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** What a profile change sets: a picture (its file and a fresh key) or none. */
export interface AvatarChange {
  file: bigint | null;
  key: string | null;
}

/**
 * The change for `avatar` in a profile update: undefined when not asked, null to remove the picture, else one of the
 * owner's own images of at most 1 MiB, with a new key. Anything else is a 400 naming the field.
 */
export async function avatarChange(
  sql: Db,
  owner: string,
  avatar: string | null | undefined,
): Promise<AvatarChange | undefined> {
  if (avatar === undefined) return undefined;
  if (avatar === null) return { file: null, key: null };
  const id = parseId("file", avatar);
  const [file] =
    id === null
      ? []
      : await sql<{ content_type: string; size: bigint }[]>`
    select content_type, size from files where id = ${id.toString()} and owner = ${owner}`;
  if (!file)
    throw invalid("avatar: no such file of yours (upload it with POST /v1/files/upload first)", { field: "avatar" });
  if (!IMAGE_TYPES.includes(file.content_type) || Number(file.size) > AVATAR_MAX_BYTES) {
    throw invalid("avatar: must be a PNG, JPEG, GIF or WebP image of at most 1 MiB", { field: "avatar" });
  }
  return { file: id, key: randomBytes(16).toString("base64url") };
}

/**
 * The `set` items for a change of picture (none when it is not changed), for a profile's update statement. A new
 * picture keeps the key of the one before: copies of author objects cached elsewhere (feed records, stream logs) then
 * show the new picture rather than a dead address. Removing the picture drops the key.
 */
export function avatarColumns(sql: Db, change: AvatarChange | undefined): postgres.PendingQuery<postgres.Row[]> {
  if (change === undefined) return sql``;
  if (change.file === null) return sql`avatar_file = null, avatar_key = null,`;
  return sql`avatar_file = ${change.file.toString()}, avatar_key = coalesce(avatar_key, ${change.key}),`;
}

export interface AvatarBlob {
  content_type: string;
  sha256: string;
}

/** The picture a key names, while it is still its owner's picture; null otherwise. */
export async function avatarByKey(sql: Db, key: string): Promise<AvatarBlob | null> {
  if (!/^[A-Za-z0-9_-]{22}$/.test(key)) return null;
  const [row] = await sql<AvatarBlob[]>`
    select f.content_type, f.sha256 from principals p join files f on f.id = p.avatar_file where p.avatar_key = ${key}`;
  return row ?? null;
}
