// Every Redis key and channel Flock uses is built here. The part in {braces} is the cluster hash tag:
// keys one script touches together share it, so multi-key scripts stay on one slot.

export type Keys = ReturnType<typeof redisKeys>;

/** Digits of an id as timelines and moment record keys hold it: zero-padded, so string order is numeric order. */
export const ID_WIDTH = 19;

export function padId(id: bigint): string {
  return id.toString().padStart(ID_WIDTH, "0");
}

export function redisKeys(prefix: string) {
  const acked = (principal: string, turn: AckTurn) => `${prefix}mb:{${principal}}:acked${turn}`;
  return {
    /** Token bucket named `<policy>:<scope>` (scope: principal id, IP or account). Hash {t, ts}. */
    bucket: (name: string) => `${prefix}rl:{${name}}`,
    /** Refused-request counter of an IP. Hash {n, start}. */
    strikes: (ip: string) => `${prefix}ban:{${ip}}:strikes`,
    /** Ban of an IP: the ms timestamp it ends, expiring with it. */
    ban: (ip: string) => `${prefix}ban:{${ip}}`,
    /** Every running ban: sorted set ip -> until ms (trimmed as written), what a starting node loads. */
    bans: () => `${prefix}bans`,
    /** Node ids held: hash id (0-1023) -> owner token (runtime/engines/nodes.ts). */
    nodeIds: () => `${prefix}nodes:{n}:ids`,
    /** Node leases: sorted set owner token -> lease expiry ms (same hash tag). */
    nodeLeases: () => `${prefix}nodes:{n}:leases`,
    /** A node's messages in flight: sorted set raw message id -> when recorded ms (same hash tag). */
    inflight: (owner: string) => `${prefix}nodes:{n}:inflight:${owner}`,
    /** Mailbox of a principal: stream of unacknowledged messages, layout in scripts/mailboxAppend-n.lua. */
    mailbox: (principal: string) => `${prefix}mb:{${principal}}`,
    /** Mailbox index of a principal: hash of seed state, entry ids and delivery counts (same hash tag). */
    mailboxIndex: (principal: string) => `${prefix}mb:{${principal}}:ix`,
    /**
     * Ack tombstones of a principal, in three sets of raw message ids that take turns (same hash tag): an ack goes
     * into the set of its time slot (see ackSlot in runtime/engines/redis/mailbox.ts), and a rebuild from rows read
     * before the ack, or a late append, checks all three and leaves the message out.
     */
    mailboxAcked: acked,
    /** All three tombstone sets of a principal, in turn order (appends and seeds check them all). */
    mailboxAckedAll: (principal: string): [string, string, string] => [acked(principal, 0), acked(principal, 1), acked(principal, 2)],
    /** A member's remembered cursors in its groups (runtime/engines/group-cursors.ts). */
    groupCursors: (member: string) => `${prefix}gc:{${member}}`,
    /** Live connections of a principal: sorted set of connection id -> expiry ms. */
    presence: (principal: string) => `${prefix}pr:{${principal}}`,
    /** A pub/sub channel. */
    channel: (name: string) => `${prefix}ch:${name}`,
    /**
     * Shard `n` of a sharded channel (SPUBLISH/SSUBSCRIBE): its hash tag places it on one slot, so on a cluster it
     * lives on the shard that owns that slot and a publish goes to that shard's subscribers only.
     */
    shardChannel: (name: string, n: number) => `${prefix}ch:${name}:{${name}${n}}`,
    /** Feed timeline of a principal, or the public one ("public"). Sorted set, layout in scripts/feedRead-1.lua. */
    feed: (timeline: string) => `${prefix}feed:{${timeline}}`,
    /**
     * Cached record of a moment, by its padded id. Hash {j: the moment's JSON head, l, k: like and comment
     * counts, r: their revision, x: tombstone}: the register scripts/momentsStore-n.lua writes by revision.
     * Every record shares one hash tag, so one script call covers any set of moments.
     */
    moment: (id: bigint) => `${prefix}mo:{m}:${padId(id)}`,
    /**
     * The JSON a reader is served for a moment, written from its record by the same script: the head closed
     * with the counts, '' once tombstoned, absent when not cached. A plain string, so a page of moments is one
     * MGET. Keyed by the padded id as timelines hold it, so a feed script builds the key by concatenation.
     */
    momentJson: (id: bigint) => `${prefix}mj:{m}:${padId(id)}`,
    /** What precedes a padded id in a moment JSON key. */
    momentJsonPrefix: () => `${prefix}mj:{m}:`,
  };
}

/** Which of a principal's three tombstone sets a time slot writes (its number mod 3). */
export type AckTurn = 0 | 1 | 2;
