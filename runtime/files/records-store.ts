// File rows in Postgres: a new upload's row, the file a caller may read (the messages that carry it decide), the
// caller's own files (to attach to a message), the blobs an account's files name, and whether any row still names a
// blob. A blob's rows are written and its removal decided under one advisory lock per SHA-256 (lockBlob), so a blob
// is never removed while a new row starts to name it (records.ts).
import type { TransactionSql } from "postgres";
import type { FileObject } from "../../schema/files.ts";
import type { Sql } from "../db/client.ts";
import { PREFIX } from "../ids.ts";

type Db = Sql | TransactionSql;

export interface FileRow {
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

/** The lock of the blob `sha256`, until the transaction ends. */
export async function lockBlob(tx: TransactionSql, sha256: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`blob:${sha256}`}, 0))`;
}

/** An upload to record. */
export interface NewFile {
  id: bigint;
  owner: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: Date;
}

/** The row of a new file, as stored. */
export async function insertFile(tx: TransactionSql, f: NewFile): Promise<FileRow> {
  const [row] = await tx<FileRow[]>`
      insert into files (id, owner, name, content_type, size, sha256, created_at)
      values (${f.id.toString()}, ${f.owner}, ${f.name}, ${f.contentType}, ${f.size}, ${f.sha256}, ${f.createdAt})
      returning id, owner, name, content_type, size, sha256, created_at`;
  return row!;
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
 * recipients (runtime/messaging/messages-store.ts).
 */
export function ownFiles(sql: Db, owner: string, fileIds: bigint[]): Promise<FileRow[]> {
  if (fileIds.length === 0) return Promise.resolve([]);
  return sql<FileRow[]>`
    select id, owner, name, content_type, size, sha256, created_at from files
    where id = any(${fileIds.map(String)}::bigint[]) and owner = ${owner}`;
}

/** The blobs (SHA-256) the files of `owner` name, once per file. */
export async function blobsOwnedBy(sql: Db, owner: string): Promise<string[]> {
  const rows = await sql<{ sha256: string }[]>`select sha256 from files where owner = ${owner}`;
  return rows.map((f) => f.sha256);
}

/** Whether any file row names the blob `sha256`. */
export async function blobNamed(tx: TransactionSql, sha256: string): Promise<boolean> {
  const [still] = await tx`select 1 from files where sha256 = ${sha256} limit 1`;
  return still !== undefined;
}
