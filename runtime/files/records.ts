// File rows and their blobs: publish an upload, find a file the caller may read (the messages that carry it decide), find the caller's own files (to
// attach to a message), and delete files. Publishing a blob and removing an unreferenced one take the same advisory
// lock (per SHA-256), so a blob is never removed while a new row starts to name it.
import type postgres from "postgres";
import type { FileObject } from "../../schema/files.ts";
import type { Sql } from "../db/client.ts";
import { PREFIX } from "../ids.ts";
import type { Services } from "../services.ts";
import type { Received } from "./intake.ts";
import type { BlobStore } from "./store.ts";

type Db = Sql | postgres.TransactionSql;

interface FileRow {
  id: bigint;
  owner: string;
  name: string;
  content_type: string;
  size: bigint;
  sha256: string;
  created_at: Date;
}

export function toFileObject(r: FileRow): FileObject {
  const id = PREFIX.file + r.id.toString();
  return {
    id,
    name: r.name,
    content_type: r.content_type,
    size: Number(r.size),
    sha256: r.sha256,
    url: `/v1/files/${id}`,
    created_at: r.created_at.toISOString(),
  };
}

const blobLock = (tx: postgres.TransactionSql, sha256: string) =>
  tx`select pg_advisory_xact_lock(hashtextextended(${`blob:${sha256}`}, 0))`;

/** Records an upload for its owner and publishes its blob, in one transaction. */
export async function publishFile(svc: Services, store: BlobStore, owner: string, up: Received): Promise<FileRow> {
  const id = svc.ids.nextRaw();
  return svc.sql.begin(async (tx) => {
    await blobLock(tx, up.sha256);
    const [row] = await tx<FileRow[]>`
      insert into files (id, owner, name, content_type, size, sha256, created_at)
      values (${id.toString()}, ${owner}, ${up.name}, ${up.contentType}, ${up.size}, ${up.sha256}, ${new Date(svc.now())})
      returning id, owner, name, content_type, size, sha256, created_at`;
    await up.staged.commit(); // a failure rolls the row back
    return row!;
  });
}

/**
 * The file if `principal` owns it or a kept message carrying it reaches them; null otherwise (existence does not
 * leak). Reaching: it was sent to them in a thread (a share) they are still a member of, and a message of that
 * thread not deleted and within retention (id at or above `horizon`) carries it (migration 0022). Primary-key
 * probes only: the shares of this file and principal, their memberships, the first kept message of each.
 */
export async function visibleFile(
  sql: Db,
  fileId: bigint,
  principal: string,
  horizon: bigint,
): Promise<FileRow | null> {
  const [row] = await sql<FileRow[]>`
    select id, owner, name, content_type, size, sha256, created_at from files f
    where f.id = ${fileId.toString()}
      and (f.owner = ${principal}
           or exists (
             select 1 from file_shares s
               join thread_members tm on tm.thread_id = s.thread_id and tm.principal = s.principal
             where s.file_id = f.id and s.principal = ${principal}
               and exists (
                 select 1 from message_files mf
                 where mf.file_id = s.file_id and mf.thread_id = s.thread_id and mf.message_id >= ${horizon.toString()})))`;
  return row ?? null;
}

/**
 * Of these files, those `owner` owns (any order; ids that do not exist or are someone else's are simply absent).
 * Attaching files to a message checks them with this; the statement that stores the message shares them with its
 * recipients (runtime/messaging/store.ts).
 */
export function ownFiles(sql: Db, owner: string, fileIds: bigint[]): Promise<FileRow[]> {
  if (fileIds.length === 0) return Promise.resolve([]);
  return sql<FileRow[]>`
    select id, owner, name, content_type, size, sha256, created_at from files
    where id = any(${fileIds.map(String)}::bigint[]) and owner = ${owner}`;
}

export async function removeUnreferencedBlobs(svc: Services, store: BlobStore, shas: string[]): Promise<void> {
  for (const sha of new Set(shas)) {
    await svc.sql.begin(async (tx) => {
      await blobLock(tx, sha);
      const [still] = await tx`select 1 from files where sha256 = ${sha} limit 1`;
      if (!still) await store.remove(sha);
    });
  }
}
