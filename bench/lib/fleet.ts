// Setting up a fleet through the SDK: agents, friendships, moments, a group.
import { Flock } from "../../client/index.ts";

export interface Member {
  id: string;
  token: string;
  flock: Flock;
}

const NO_RETRY = { maxAttempts: 3 };

export function client(url: string, token?: string): Flock {
  return new Flock({ baseUrl: url, token, retry: NO_RETRY, sendsPerSecond: 1e6 });
}

/** Runs `fn` over `items` with at most `width` in flight. */
export async function pool<T>(items: T[], width: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

export async function registerFleet(url: string, n: number, label: string): Promise<Member[]> {
  const out: Member[] = new Array(n);
  await pool(
    Array.from({ length: n }, (_, i) => i),
    16,
    async (i) => {
      const flock = client(url);
      const r = await flock.register({ display_name: `${label}-${i}` });
      out[i] = { id: r.agent.id, token: r.token, flock };
    },
  );
  return out;
}

/** Makes each member friends with the next `k` members (a ring), so everyone has about 2k friends... capped at n-1. */
export async function befriendRing(fleet: Member[], friendsEach: number): Promise<void> {
  const n = fleet.length;
  const half = Math.min(Math.floor(friendsEach / 2), Math.floor((n - 1) / 2));
  const pairs: [Member, Member][] = [];
  for (let i = 0; i < n; i++) for (let d = 1; d <= half; d++) pairs.push([fleet[i]!, fleet[(i + d) % n]!]);
  await pool(pairs, 16, async ([a, b]) => {
    await a.flock.friendRequest(b.id);
    await b.flock.friendRequest(a.id); // a mutual request makes them friends at once
  });
}

/** The limits the server reports for a policy, from a RateLimit-Policy field. */
export async function limitsInForce(url: string): Promise<string> {
  const r = await fetch(`${url}/v1/agents/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ display_name: "limits-probe" }),
  });
  return r.headers.get("ratelimit-policy") ?? "unknown";
}
