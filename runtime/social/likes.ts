// Likes and unlikes by group commit: the likes (or unlikes) that arrive while one statement runs go to
// Postgres together in the next, one commit and one WAL flush for all of them, and each request still gets
// its own answer. Under load a like then costs Postgres a fraction of a transaction; alone it runs at once.
// Counts stay exact: the statement inserts (or deletes) the rows and moves each moment's counter by the
// number of rows that actually changed, raising its `rev` (see runtime/engines/moments.ts).
// A moment past the moments horizon (runtime/retention/horizons.ts) is gone: liking or unliking it answers 404 before
// any statement (its id tells its time).
import type { Sql } from "../db/client.ts";
import { notFound } from "../errors.ts";
import { asError, Batcher } from "../batcher.ts";
import { isFkViolation, retryOnDeadlock } from "../db/errors.ts";
import { type CountsRow, visibleToViewer } from "./moments-sql.ts";

interface LikeItem {
  moment: bigint;
  principal: string;
  /** The moments horizon (`svc.horizons.moments()`): a moment older than it is gone. Absent: none. */
  horizon?: bigint;
}

/** One item's answer: whether the moment is visible to its principal, and the moment's counts (id null: unchanged). */
interface Reacted extends Omit<CountsRow, "id"> {
  found: boolean;
  id: bigint | null;
}

type Kind = "like" | "unlike";

/** One statement for a whole batch: per item, in order, its Reacted row. */
async function statement(sql: Sql, kind: Kind, items: LikeItem[]): Promise<Reacted[]> {
  const change =
    kind === "like"
      ? sql`insert into moment_likes (moment, principal) select moment, principal from vis
            on conflict do nothing returning moment`
      : sql`delete from moment_likes l using vis where l.moment = vis.moment and l.principal = vis.principal
            returning l.moment`;
  const sign = kind === "like" ? sql`+` : sql`-`;
  return sql<Reacted[]>`
    with req as (
      select * from unnest(${items.map((i) => String(i.moment))}::bigint[], ${items.map((i) => i.principal)}::text[])
        with ordinality as r(moment, principal, ord)),
    vis as (
      select r.ord, r.moment, r.principal from req r join moments m on m.id = r.moment
      where ${visibleToViewer(sql, sql`r.principal`)}),
    changed as (${change}),
    n as (select moment, count(*)::int as n from changed group by moment),
    upd as (
      update moments m set like_count = m.like_count ${sign} n.n, rev = m.rev + 1 from n where m.id = n.moment
      returning m.id, m.like_count, m.comment_count, m.rev)
    select (v.ord is not null) as found, upd.id, upd.like_count, upd.comment_count, upd.rev
    from req r left join vis v on v.ord = r.ord left join upd on upd.id = r.moment
    order by r.ord`;
}

interface Queued extends LikeItem {
  kind: Kind;
}

export class Likes {
  // One statement in flight per node, likes and unlikes alike: a like batch and an unlike batch running together
  // lock moment rows and like rows in opposite orders and deadlock (Postgres breaks it after a second with an
  // error). Batches from different nodes still can; the victim statement runs again (retryOnDeadlock).
  private readonly batch: Batcher<Queued, Reacted>;

  constructor(private readonly sql: Sql) {
    this.batch = new Batcher((items) => this.runMixed(items), 1);
  }

  /** Like a moment (a no-op if already liked). Rejects with 404 when the moment is missing or not visible. */
  like(item: LikeItem): Promise<Reacted> {
    if (expired(item)) return Promise.reject(notFound("moment"));
    return this.batch.push({ ...item, kind: "like" }).then(found);
  }

  /** Take a like back (a no-op if not liked). Rejects with 404 when the moment is missing or not visible. */
  unlike(item: LikeItem): Promise<Reacted> {
    if (expired(item)) return Promise.reject(notFound("moment"));
    return this.batch.push({ ...item, kind: "unlike" }).then(found);
  }

  /**
   * A batch in arrival order: for each (moment, principal) only its last request decides the end state (an unlike
   * then a like ends liked), so the batch is one like statement for the pairs whose last request is a like and one
   * unlike statement for the others; an earlier request of a pair gets the answer of its last. A statement that
   * fails answers its own items with the error; the other keeps its answers.
   */
  private async runMixed(items: Queued[]): Promise<(Reacted | Error)[]> {
    const last = new Map<string, number>();
    items.forEach((it, i) => last.set(`${it.moment} ${it.principal}`, i));
    const out: (Reacted | Error)[] = new Array(items.length);
    for (const kind of ["like", "unlike"] as const) {
      const at = [...last.values()].filter((i) => items[i]!.kind === kind).sort((a, b) => a - b);
      if (at.length === 0) continue;
      const batch = at.map((i) => items[i]!);
      const done = await this.run(kind, batch).catch((err: unknown) => batch.map(() => asError(err)));
      done.forEach((r, j) => {
        out[at[j]!] = r;
      });
    }
    items.forEach((it, i) => {
      out[i] ??= out[last.get(`${it.moment} ${it.principal}`)!]!;
    });
    return out;
  }

  private async run(kind: Kind, items: LikeItem[]): Promise<(Reacted | Error)[]> {
    try {
      return await retryOnDeadlock(() => statement(this.sql, kind, items));
    } catch (err) {
      // A moment (or liker) deleted while we wrote fails the whole statement: answer each item alone,
      // so only the likes of what disappeared get their 404.
      if (!isFkViolation(err)) throw err;
      if (items.length === 1) return [notFound("moment")];
      return Promise.all(items.map((item) => this.run(kind, [item]).then((r) => r[0]!)));
    }
  }
}

/** Whether the item's moment is past its horizon (ids are time-ordered: runtime/ids.ts). */
function expired(item: LikeItem): boolean {
  return item.horizon !== undefined && item.moment < item.horizon;
}

function found(r: Reacted): Reacted {
  if (!r.found) throw notFound("moment");
  return r;
}
