// Where Redis is: REDIS_URL names one server (redis://, rediss://) or a Redis Cluster by some of its nodes
// (redis+cluster://[user:password@]host:port,host:port,... or rediss+cluster:// for TLS); the cluster client
// learns the rest of the nodes, and where each slot lives, from any one of them.

export interface ClusterTarget {
  kind: "cluster";
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

type RedisTarget = { kind: "single"; url: string } | ClusterTarget;

const CLUSTER = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/i;

/** The target a REDIS_URL names; throws with the reason when a cluster URL is malformed. */
export function redisTarget(url: string): RedisTarget {
  const m = CLUSTER.exec(url);
  if (!m) return { kind: "single", url };
  const [, scheme, auth, hosts] = m;
  const nodes = hosts!.split(",").map((h) => {
    const hp = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(h.trim());
    const port = Number(hp?.[2]);
    if (!hp || port < 1 || port > 65535) throw new Error(`"${h}" is not host:port`);
    return { host: hp[1]!.replace(/^\[|\]$/g, ""), port };
  });
  let username: string | undefined;
  let password: string | undefined;
  if (auth) {
    const i = auth.indexOf(":");
    username = decodeURIComponent(i < 0 ? auth : auth.slice(0, i)) || undefined;
    password = i < 0 ? undefined : decodeURIComponent(auth.slice(i + 1));
  }
  return { kind: "cluster", nodes, username, password, tls: scheme!.toLowerCase() === "rediss" };
}

/** Whether a REDIS_URL names a cluster. */
export const isClusterUrl = (url: string) => CLUSTER.test(url);
