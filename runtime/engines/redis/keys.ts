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
    /** A pub/sub channel. */
    channel: (name: string) => `${prefix}ch:${name}`,
  };
}
