// Reports, moderators and the audit log in Postgres (migration 0028), and the reads moderation needs: who owns a
// target a reporter can see, a principal's content (to remove it all), one comment's removal with its moment's count.
import type { Sql } from "../db/client.ts";
import { type CountsRow, visibleTo } from "../social/moment-reads-store.ts";

export type TargetKind = "principal" | "moment" | "comment" | "message";

export interface ReportRow {
  id: bigint;
  reporter: string;
  target_kind: TargetKind;
  target_id: string;
  target_owner: string;
  reason: string;
  details: string;
  status: "open" | "resolved" | "dismissed";
  created_at: Date;
  closed_at: Date | null;
  closed_by: string | null;
}

/**
 * The principal a target belongs to, when `me` may see it: an agent (public), a person `me` is friends with, shares a
 * thread with or has a request from; a moment `me` may see; a comment on one; a message of a thread `me` is in.
 * Undefined otherwise (404 for the caller, as for a target that does not exist).
 */
export async function visibleOwner(
  sql: Sql,
  me: string,
  kind: TargetKind,
  id: bigint | string,
  horizons: { moments: bigint; messages: bigint },
): Promise<string | undefined> {
  let rows: { owner: string }[];
  switch (kind) {
    case "principal":
      rows = await sql<{ owner: string }[]>`
        select p.id as owner from principals p where p.id = ${String(id)} and (p.kind = 'agent' or p.id = ${me}
          or exists (select 1 from friendships f where f.principal = ${me} and f.friend = p.id)
          or exists (select 1 from friend_requests r where r.from_id = p.id and r.to_id = ${me})
          or exists (select 1 from thread_members a join thread_members b on b.thread_id = a.thread_id
                     where a.principal = ${me} and b.principal = p.id))`;
      break;
    case "moment":
      rows = await sql<{ owner: string }[]>`
        select m.author as owner from moments m
        where m.id = ${String(id)} and m.id >= ${String(horizons.moments)} and ${visibleTo(sql, me)}`;
      break;
    case "comment":
      rows = await sql<{ owner: string }[]>`
        select c.author as owner from moment_comments c join moments m on m.id = c.moment
        where c.id = ${String(id)} and m.id >= ${String(horizons.moments)} and ${visibleTo(sql, me)}`;
      break;
    case "message":
      rows = await sql<{ owner: string }[]>`
        select x.sender as owner from messages x
        join thread_members tm on tm.thread_id = x.thread_id and tm.principal = ${me}
        where x.id = ${String(id)} and x.id >= ${String(horizons.messages)} and x.deleted_at is null`;
      break;
  }
  return rows[0]?.owner;
}

/** What a target says now, for the moderators' queue: a principal's name, a moment's, comment's or message's text. */
export async function targetText(sql: Sql, kind: TargetKind, id: bigint | string): Promise<string | undefined> {
  let rows: { text: string }[];
  switch (kind) {
    case "principal":
      rows = await sql<{ text: string }[]>`select display_name as text from principals where id = ${String(id)}`;
      break;
    case "moment":
      rows = await sql<{ text: string }[]>`select content as text from moments where id = ${String(id)}`;
      break;
    case "comment":
      rows = await sql<{ text: string }[]>`select body as text from moment_comments where id = ${String(id)}`;
      break;
    case "message":
      rows = await sql<{ text: string }[]>`
        select body as text from messages where id = ${String(id)} and deleted_at is null`;
      break;
  }
  return rows[0]?.text;
}

/** Stores a report, or finds the one `reporter` made of the same target before: the report and whether it is new. */
export async function saveReport(
  sql: Sql,
  r: Omit<ReportRow, "status" | "closed_at" | "closed_by">,
): Promise<{ report: ReportRow; created: boolean }> {
  const [made] = await sql<ReportRow[]>`
    insert into reports (id, reporter, target_kind, target_id, target_owner, reason, details, created_at)
    values (${String(r.id)}, ${r.reporter}, ${r.target_kind}, ${r.target_id}, ${r.target_owner}, ${r.reason},
            ${r.details}, ${r.created_at})
    on conflict (reporter, target_kind, target_id) do nothing
    returning *`;
  if (made) return { report: made, created: true };
  const [had] = await sql<ReportRow[]>`
    select * from reports where reporter = ${r.reporter} and target_kind = ${r.target_kind}
      and target_id = ${r.target_id}`;
  return { report: had!, created: false };
}

/** Open reports after `after`, oldest first, at most `limit` + 1 (one more tells whether more exist). */
export function openReports(sql: Sql, after: bigint, limit: number): Promise<ReportRow[]> {
  return sql<ReportRow[]>`
    select * from reports where status = 'open' and id > ${String(after)} order by id limit ${limit + 1}`;
}

/** Closes an open report as resolved or dismissed: the report, or undefined when there is no open one. */
export async function closeReport(
  sql: Sql,
  id: bigint,
  status: "resolved" | "dismissed",
  by: string,
  at: Date,
): Promise<ReportRow | undefined> {
  const [row] = await sql<ReportRow[]>`
    update reports set status = ${status}, closed_by = ${by}, closed_at = ${at}
    where id = ${String(id)} and status = 'open' returning *`;
  return row;
}

/** Closes every open report of content owned by `owner` (its suspension dealt with them): how many. */
export async function resolveReportsOf(sql: Sql, owner: string, by: string, at: Date): Promise<number> {
  const rows = await sql`
    update reports set status = 'resolved', closed_by = ${by}, closed_at = ${at}
    where target_owner = ${owner} and status = 'open' returning id`;
  return rows.length;
}

/** Whether an admin granted `principal` the moderator role (npm run moderator). */
export async function isGrantedModerator(sql: Sql, principal: string): Promise<boolean> {
  const [row] = await sql<{ one: number }[]>`select 1 as one from moderators where principal = ${principal}`;
  return row !== undefined;
}

/** Grants the moderator role to an existing principal (the admin command): whether the principal exists. */
export async function grantModerator(sql: Sql, principal: string): Promise<boolean> {
  const [row] = await sql<{ principal: string }[]>`
    insert into moderators (principal) select id from principals where id = ${principal}
    on conflict (principal) do update set principal = excluded.principal returning principal`;
  return row !== undefined;
}

/** Takes the moderator role back (the admin command): whether it was granted. */
export async function revokeModerator(sql: Sql, principal: string): Promise<boolean> {
  return (await sql`delete from moderators where principal = ${principal} returning principal`).length > 0;
}

export interface AuditRow {
  id: bigint;
  moderator: string;
  action: string;
  target_kind: string;
  target_id: string;
  reason: string;
  details: Record<string, unknown>;
  at: Date;
}

/** Appends one entry to the audit log (which refuses any update or delete). */
export async function appendAudit(sql: Sql, a: AuditRow): Promise<void> {
  await sql`
    insert into moderation_audit (id, moderator, action, target_kind, target_id, reason, details, at)
    values (${String(a.id)}, ${a.moderator}, ${a.action}, ${a.target_kind}, ${a.target_id}, ${a.reason},
            ${sql.json(a.details as never)}, ${a.at})`;
}

/** The audit log newest first, before `before` (0: from the newest), at most `limit` + 1. */
export function auditPage(sql: Sql, before: bigint, limit: number): Promise<AuditRow[]> {
  return before > 0n
    ? sql<AuditRow[]>`select * from moderation_audit where id < ${String(before)} order by id desc limit ${limit + 1}`
    : sql<AuditRow[]>`select * from moderation_audit order by id desc limit ${limit + 1}`;
}

/** The author of a moment (moderation removes it as its author's delete does). */
export async function momentAuthor(sql: Sql, id: bigint): Promise<string | undefined> {
  const [row] = await sql<{ author: string }[]>`select author from moments where id = ${String(id)}`;
  return row?.author;
}

/** The sender of a message not yet deleted. */
export async function messageSender(sql: Sql, id: bigint): Promise<string | undefined> {
  const [row] = await sql<{ sender: string }[]>`
    select sender from messages where id = ${String(id)} and deleted_at is null`;
  return row?.sender;
}

/** Deletes one comment and lowers its moment's count (raising its `rev`): the moment's new counts, or null. */
export async function deleteComment(sql: Sql, id: bigint): Promise<CountsRow | null> {
  const [row] = await sql<CountsRow[]>`
    with c as (delete from moment_comments where id = ${String(id)} returning moment)
    update moments m set comment_count = m.comment_count - 1, rev = m.rev + 1 from c where m.id = c.moment
    returning m.id, m.like_count, m.comment_count, m.rev`;
  return row ?? null;
}

/** Deletes every comment by `author`, lowering each moment's count: the moments' new counts, and `n` gone from each. */
export function deleteCommentsBy(sql: Sql, author: string): Promise<(CountsRow & { n: number })[]> {
  return sql<(CountsRow & { n: number })[]>`
    with c as (delete from moment_comments where author = ${author} returning moment),
    n as (select moment, count(*)::int as n from c group by moment)
    update moments m set comment_count = m.comment_count - n.n, rev = m.rev + 1 from n where m.id = n.moment
    returning m.id, m.like_count, m.comment_count, m.rev, n.n`;
}

/** Up to `limit` of `author`'s moments. */
export async function momentsOf(sql: Sql, author: string, limit: number): Promise<bigint[]> {
  const rows = await sql<{ id: bigint }[]>`select id from moments where author = ${author} limit ${limit}`;
  return rows.map((r) => BigInt(r.id));
}

/** Up to `limit` of the messages `sender` sent that are not deleted yet. */
export async function messagesOf(sql: Sql, sender: string, limit: number): Promise<bigint[]> {
  const rows = await sql<{ id: bigint }[]>`
    select id from messages where sender = ${sender} and deleted_at is null limit ${limit}`;
  return rows.map((r) => BigInt(r.id));
}

/** The principals an admin granted the moderator role, oldest grant first. */
export async function grantedModerators(sql: Sql): Promise<string[]> {
  const rows = await sql<{ principal: string }[]>`select principal from moderators order by granted_at, principal`;
  return rows.map((r) => r.principal);
}
