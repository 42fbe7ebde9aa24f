// Likes and unlikes by group commit: the likes (or unlikes) that arrive while one statement runs go to
// Postgres together in the next, one commit and one WAL flush for all of them, and each request still gets
// its own answer. Under load a like then costs Postgres a fraction of a transaction; alone it runs at once.
// Counts stay exact: the statement (likes-store.ts) inserts (or deletes) the rows and moves each moment's counter by
// the number of rows that actually changed, raising its `rev` (see runtime/engines/moments.ts).
// A moment past the moments horizon (runtime/retention/horizons.ts) is gone: liking or unliking it answers 404 before
// any statement (its id tells its time).
import type { Sql } from "../db/client.ts";
import { notFound } from "../errors.ts";
import { asError, Batcher } from "../batcher.ts";
import { isFkViolation, retryOnDeadlock } from "../db/errors.ts";
import { type LikeKind, type LikePair, react, type Reacted } from "./likes-store.ts";

interface LikeItem extends LikePair {
  /** The moments horizon (`svc.horizons.moments()`): a moment older than it is gone. Absent: none. */
  horizon?: bigint;
}

interface Queued extends LikeItem {
  kind: LikeKind;
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

  private async run(kind: LikeKind, items: LikeItem[]): Promise<(Reacted | Error)[]> {
    try {
      return await retryOnDeadlock(() => react(this.sql, kind, items));
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
