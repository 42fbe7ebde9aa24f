// Every Redis key and channel Flock uses is built here. The part in {braces} is the cluster hash tag:
// keys one script touches together share it, so multi-key scripts stay on one slot.

export type Keys = ReturnType<typeof redisKeys>;

/** Digits of an id as timelines and moment record keys hold it: zero-padded, so string order is numeric order. */
export const ID_WIDTH = 19;

export function padId(id: bigint): string {
  return id.toString().padStart(ID_WIDTH, "0");
}

export function redisKeys(prefix: string) {
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
    /** What each live node runs: hash owner token -> its release as JSON (runtime/release.ts; same hash tag). */
    nodeReleases: () => `${prefix}nodes:{n}:releases`,
    /** The keyspace's layout number (runtime/release.ts LAYOUT), set by the first node of a deployment. */
    layout: () => `${prefix}nodes:{n}:layout`,
    /** A member's remembered cursors in its inbox and groups (runtime/engines/stream-cursors.ts). */
    streamCursors: (member: string) => `${prefix}gc:{${member}}`,
    /** The log of a stream (an inbox: the principal id; a group: `g:<id>`): runtime/engines/redis/stream-log.ts. */
    streamLog: (stream: string) => `${prefix}st:{${stream}}`,
    /** Live connections of a principal: sorted set of connection id -> expiry ms. */
    presence: (principal: string) => `${prefix}pr:{${principal}}`,
    /** A one-time ticket (runtime/engines/tickets.ts): its expiry and value, dropped by PX when not taken. */
    ticket: (ticket: string) => `${prefix}tk:{${ticket}}`,
    /** A pub/sub channel. */
    channel: (name: string) => `${prefix}ch:${name}`,
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
    /** The webhook delivery jobs: a stream read by one consumer group (runtime/engines/webhook-jobs.ts). */
    webhookJobs: () => `${prefix}wh:{q}:jobs`,
    /** Hash agent -> the entry id of its webhook job (one job per agent; same hash tag). */
    webhookQueued: () => `${prefix}wh:{q}:queued`,
    /** What precedes a padded id in a moment JSON key. */
    momentJsonPrefix: () => `${prefix}mj:{m}:`,
  };
}
