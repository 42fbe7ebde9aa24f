// Blocks and mutes (docs/ARCHITECTURE.md, "Blocks and mutes"): the use cases (block, unblock, mute, unmute) and each
// node's cache of every principal's blocks either way and mutes, read in one statement (blocks-store.ts: relationsOf)
// and kept RELATIONS_TTL_MS. A change drops both principals' entries on every node at once (pub/sub, the way paid
// agents' terms are dropped: runtime/payments/terms.ts); the TTL bounds how long a change whose broadcast was lost goes
// unseen. What reads it: a direct send (refused either way), the feed (filtered for a reader who has any), and a
// group message's hand-out (hidden from whoever blocked its sender: long polls and sockets).
import { CHANNELS, listen, publish } from "../engines/node-channels.ts";
import { conflict, invalid, notFound } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Core, Services } from "../services.ts";
import { MAX_BLOCKS, MAX_MUTES } from "../../schema/blocks.ts";
import { deleteBlock, deleteMute, insertBlock, insertMute, relationsOf } from "./blocks-store.ts";
import { invalidate } from "./feed.ts";
import { lockPair } from "./locks-store.ts";

/** How long a node trusts what it read of a principal's blocks and mutes without hearing of a change. */
export const RELATIONS_TTL_MS = 30_000;
const CACHE_MAX = 100_000;

/** One principal's blocks either way and mutes. */
export interface Relations {
  /** Whom the principal blocked. */
  blocking: ReadonlySet<string>;
  /** Who blocked the principal. */
  blockedBy: ReadonlySet<string>;
  /** Whom the principal muted. */
  muted: ReadonlySet<string>;
}

const NONE: Relations = { blocking: new Set(), blockedBy: new Set(), muted: new Set() };

/** Whether a principal has no blocks either way and no mutes (the hot path's case: nothing to filter). */
export const isClear = (r: Relations) => r.blocking.size === 0 && r.blockedBy.size === 0 && r.muted.size === 0;

/** Whether a block stands between the principal of `r` and `other`, made by either. */
export const cutFrom = (r: Relations, other: string) => r.blocking.has(other) || r.blockedBy.has(other);

export class RelationsCache {
  private readonly known = new Map<string, { r: Relations; at: number }>();
  private readonly reading = new Map<string, Promise<Relations>>();
  private starting: Promise<void> | undefined;
  private readonly listeners: ((principal: string) => void)[] = [];

  constructor(private readonly svc: Pick<Core, "sql" | "engines" | "log" | "now">) {}

  /** Subscribe to changes (startNode does, before any request; a lookup would too). */
  start(): Promise<void> {
    this.starting ??= listen(this.svc.engines.pubsub, CHANNELS.relationsForget, this.svc.log, (id) => {
      this.drop(id);
    }).then(() => undefined);
    return this.starting;
  }

  /** What this node holds of `me`'s relations right now, without waiting (undefined: not read, or stale). */
  cached(me: string): Relations | undefined {
    const hit = this.known.get(me);
    return hit !== undefined && this.svc.now() - hit.at < RELATIONS_TTL_MS ? hit.r : undefined;
  }

  /** `me`'s blocks either way and mutes: from the cache, else one statement. */
  async of(me: string): Promise<Relations> {
    const hit = this.cached(me);
    if (hit !== undefined) return hit;
    await this.start();
    const running = this.reading.get(me);
    if (running !== undefined) return running;
    const at = this.svc.now();
    const read = relationsOf(this.svc.sql, me)
      .then((rows) => {
        const r =
          rows.blocking.length + rows.blockedBy.length + rows.muted.length === 0
            ? NONE
            : { blocking: new Set(rows.blocking), blockedBy: new Set(rows.blockedBy), muted: new Set(rows.muted) };
        // a change heard while the read ran dropped the promise: this read is stale then, and not kept
        if (this.reading.get(me) === read) {
          if (this.known.size >= CACHE_MAX) this.known.clear();
          this.known.set(me, { r, at });
        }
        return r;
      })
      .finally(() => {
        if (this.reading.get(me) === read) this.reading.delete(me);
      });
    this.reading.set(me, read);
    return read;
  }

  /** After a change between `a` and `b`: every node drops both (this one at once). */
  async changed(a: string, b: string): Promise<void> {
    this.drop(a);
    this.drop(b);
    await Promise.all([
      publish(this.svc.engines.pubsub, CHANNELS.relationsForget, a),
      publish(this.svc.engines.pubsub, CHANNELS.relationsForget, b),
    ]);
  }

  /** Be told (on this node) of every change to a principal's blocks or mutes, this node's and others'. */
  onChange(listener: (principal: string) => void): void {
    this.listeners.push(listener);
  }

  private drop(id: string): void {
    this.known.delete(id);
    this.reading.delete(id);
    for (const l of this.listeners) l(id);
  }
}

type Svc = Services;

/** The other principal of a block or mute the path names: 400 for oneself. */
function otherOf(me: string, other: string): string {
  if (other === me) throw invalid("principal: you cannot block or mute yourself", { field: "principal" });
  return other;
}

/** Tells every node of a change; a failure (Redis down) costs freshness until RELATIONS_TTL_MS, not the request. */
async function told(svc: Svc, log: Logger, a: string, b: string): Promise<void> {
  await svc.relations.changed(a, b).catch((err: unknown) => log.warn({ err }, "block or mute change not told"));
}

/**
 * `me` blocks `other` (idempotent). 404 for an id that is no one's, 400 for oneself, 409 past MAX_BLOCKS. Their
 * friendship ends (both feeds dropped, both sides' connections told) and pending requests between them are dropped.
 */
export async function block(svc: Svc, log: Logger, me: string, target: string): Promise<void> {
  const other = otherOf(me, target);
  const out = await svc.sql.begin(async (tx) => {
    await lockPair(tx, me, other);
    const r = await insertBlock(tx, me, other, MAX_BLOCKS);
    // the friendship's feeds go before the commit, as an unfriending drops them (friendships.ts: endFriendship)
    if (r.friends) await svc.engines.feed.invalidate([me, other]);
    return r;
  });
  if (out.outcome === "no_principal") throw notFound("principal");
  if (out.outcome === "full") throw conflict(`you hold ${MAX_BLOCKS} blocks, the most one may hold; unblock one first`);
  await told(svc, log, me, other);
  if (out.friends) {
    await invalidate(svc, log, [me, other]);
    await svc.announce
      .friendship({ a: me, b: other })
      .catch((err: unknown) => log.warn({ err }, "friendship change not announced"));
  }
}

/** `me` unblocks `other`: 404 when there was no such block. Contact is possible again; the friendship is not back. */
export async function unblock(svc: Svc, log: Logger, me: string, target: string): Promise<void> {
  const other = otherOf(me, target);
  if (!(await deleteBlock(svc.sql, me, other))) throw notFound("block");
  await told(svc, log, me, other);
}

/** `me` mutes `other` (idempotent, silent): 404 for an id that is no one's, 400 for oneself, 409 past MAX_MUTES. */
export async function mute(svc: Svc, log: Logger, me: string, target: string): Promise<void> {
  const other = otherOf(me, target);
  const out = await insertMute(svc.sql, me, other, MAX_MUTES);
  if (out === "no_principal") throw notFound("principal");
  if (out === "full") throw conflict(`you hold ${MAX_MUTES} mutes, the most one may hold; unmute one first`);
  await told(svc, log, me, other);
}

/** `me` unmutes `other`: 404 when there was no such mute. */
export async function unmute(svc: Svc, log: Logger, me: string, target: string): Promise<void> {
  const other = otherOf(me, target);
  if (!(await deleteMute(svc.sql, me, other))) throw notFound("mute");
  await told(svc, log, me, other);
}
