// Every Redis key and channel Flock uses is built here. The part in {braces} is the cluster hash tag:
// keys one script touches together share it, so multi-key scripts stay on one slot.

export type Keys = ReturnType<typeof redisKeys>;

export function redisKeys(prefix: string) {
  return {
    /** Token bucket named `<policy>:<scope>` (scope: principal id, IP or account). Hash {t, ts}. */
    bucket: (name: string) => `${prefix}rl:{${name}}`,
    /** Refused-request counter of an IP. Hash {n, start}. */
    strikes: (ip: string) => `${prefix}ban:{${ip}}:strikes`,
    /** Ban of an IP: the ms timestamp it ends, expiring with it. */
    ban: (ip: string) => `${prefix}ban:{${ip}}`,
    /** Counter handing out node ids (taken modulo 1024). */
    nodeSeq: () => `${prefix}node-seq`,
    /** Mailbox of a principal: stream of unacknowledged messages, layout in scripts/mailboxAppend-2.lua. */
    mailbox: (principal: string) => `${prefix}mb:{${principal}}`,
    /** Mailbox index of a principal: hash of seed state, entry ids and delivery counts (same hash tag). */
    mailboxIndex: (principal: string) => `${prefix}mb:{${principal}}:ix`,
    /** Live connections of a principal: sorted set of connection id -> expiry ms. */
    presence: (principal: string) => `${prefix}pr:{${principal}}`,
    /** A pub/sub channel. */
    channel: (name: string) => `${prefix}ch:${name}`,
    /** Feed timeline of a principal, or the public one ("public"). Sorted set, layout in scripts/feedRead-1.lua. */
    feed: (timeline: string) => `${prefix}feed:{${timeline}}`,
    /**
     * Cached record of a moment. Hash {j: the moment's JSON head, l, k: like and comment counts, r: their
     * revision, x: tombstone}. Every record shares one hash tag, so a feed page is one script call.
     */
    moment: (id: string) => `${prefix}mo:{m}:${id}`,
  };
}
