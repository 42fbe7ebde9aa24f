// Account deletion (humans and agents): irreversible, at most once per 24 hours per account.
//
// The principals row is deleted and everything hanging off it goes with it through ON DELETE CASCADE: tokens,
// wallets and provider identities, moments (with every like and comment on them), the account's likes and
// comments on other moments, friendships, friend requests, thread memberships, files and file shares; groups it
// owned lose their owner, and its inbox goes. Its cursors (in its inbox and groups) have no foreign key: they are
// deleted here, in the transaction and once more after it commits, for a send that raced the deletion. Messages it sent stay
// (messages.sender has no foreign key) and render from a deleted author. Before the cascade, the like and comment counters of other
// moments are lowered by exactly what disappears (raising their `rev`), and the account's own moments are
// tombstoned in the moment record cache before the delete commits; afterwards the other caches are told
// (tokens, feeds, counts) and blobs no other file names are removed. This file is the use case; its statements are
// deletion-store.ts's and those of the stores of the rooms it touches.
import { forgetMember } from "../messaging/stream-store.ts";
import type { Principal } from "../auth.ts";
import { PUBLIC_TIMELINE } from "../engines/feed.ts";
import type { Logger } from "../log.ts";
import type { Services } from "../services.ts";
import { identityKeys } from "../signin/identities-store.ts";
import { recordCounts } from "../social/feed.ts";
import { dropRequestsTo } from "../social/friends-store.ts";
import { type CountsRow, friendsOf } from "../social/moment-reads-store.ts";
import { removeUnreferencedBlobs } from "../files/records.ts";
import { blobsOwnedBy } from "../files/records-store.ts";
import {
  deletePrincipal,
  dropCommentsBy,
  dropLikesBy,
  lockAccount,
  momentsBy,
  publicMomentsBy,
} from "./deletion-store.ts";

/**
 * The rate-limit scopes of an account: its stable identities (wallets, provider subjects and passkey credentials of a
 * human, the id of an agent), so signing up again as a new user with the same wallet or passkey does not reset the
 * limit.
 */
async function accountScopes(svc: Services, p: Principal): Promise<string[]> {
  if (p.kind === "agent") return [`agent:${p.id}`];
  const keys = (await identityKeys(svc.sql, p.id)).sort();
  return keys.length > 0 ? keys : [`principal:${p.id}`];
}

interface Removed {
  found: boolean;
  friends: string[];
  publicMoments: bigint[];
  blobs: string[];
  /** New counts of other accounts' moments this account had liked or commented on. */
  counts: CountsRow[];
}

export async function deleteAccount(
  svc: Services,
  p: Principal,
  ip: string,
  replyHeaders: Record<string, string>,
  log: Logger,
): Promise<void> {
  for (const scope of await accountScopes(svc, p)) {
    await svc.limiter.enforce("delete_account", scope, ip, replyHeaders);
  }
  const removed = await svc.sql.begin(async (tx): Promise<Removed> => {
    // Row lock first: a like or comment being written by this account holds a key-share lock on this row,
    // so we wait for it; any later one fails its foreign key. The counter fix-ups below are therefore exact.
    if (!(await lockAccount(tx, p.id))) return { found: false, friends: [], publicMoments: [], blobs: [], counts: [] };
    const liked = await dropLikesBy(tx, p.id);
    const commented = await dropCommentsBy(tx, p.id);
    // Tombstoned before the cascade commits, so no cached copy of them can outlive it.
    await svc.engines.moments.forget(await momentsBy(tx, p.id));
    const friends = await friendsOf(tx, p.id);
    const publicMoments = await publicMomentsBy(tx, p.id);
    const blobs = await blobsOwnedBy(tx, p.id);
    await forgetMember(tx, p.id);
    // requests to it have no foreign key (those to a person are kept whoever the id is: migration 0013)
    await dropRequestsTo(tx, p.id);
    await deletePrincipal(tx, p.id);
    return {
      found: true,
      friends,
      publicMoments,
      blobs,
      // A moment in both lists was updated twice: the later row (higher rev) wins in the cache anyway.
      counts: [...liked, ...commented],
    };
  });
  // Committed: the account is gone. What follows only tidies caches; each step tolerates failure.
  await svc.auth.forget(p.id);
  if (!removed.found) return;
  await tidyCaches(svc, log, p.id, removed);
  try {
    await removeUnreferencedBlobs(svc, svc.files, removed.blobs);
  } catch (err) {
    log.error({ err, principal: p.id }, "account deleted, but some of its blobs could not be removed");
  }
  log.info({ principal: p.id, kind: p.kind }, "account deleted");
}

/**
 * Feeds forget the account's moments (their records are tombstoned already); its own timeline is dropped, and the
 * inbox cursor a racing send made after the delete's snapshot; the counts lowered on other moments reach the record cache.
 */
async function tidyCaches(svc: Services, log: Logger, id: string, removed: Removed): Promise<void> {
  const { feed } = svc.engines;
  const steps: [string, () => Promise<void>][] = [
    [
      "public timeline",
      () =>
        removed.publicMoments.length > 0 ? feed.remove([PUBLIC_TIMELINE], removed.publicMoments) : Promise.resolve(),
    ],
    ["friends' timelines", () => feed.invalidate([id, ...removed.friends])],
    ["cursors made meanwhile", () => forgetMember(svc.sql, id)],
    ["counts", () => recordCounts(svc, log, removed.counts)],
    [
      "friendships (its friends' connections watch it)",
      async () => void (await Promise.all(removed.friends.map((f) => svc.announce.friendship({ a: id, b: f })))),
    ],
  ];
  for (const [what, step] of steps) {
    try {
      await step();
    } catch (err) {
      log.warn({ err, principal: id }, `account deleted; clearing its ${what} from the cache failed`);
    }
  }
}
