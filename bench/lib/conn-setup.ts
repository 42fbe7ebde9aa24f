// What the connections scenario needs before it connects: its agents (registered over HTTP, many in flight, spread
// over the nodes) and its groups (each owned by an agent of its own that holds no socket, so every socket is a
// receiver of every message of its group), and the group sends.
import { pool } from "./fleet.ts";
import { keyHeader } from "./idempotency.ts";

export interface Registered {
  id: string;
  token: string;
}

/** A POST, tried again a few times; `extra` headers (an Idempotency-Key) go with every attempt, the same on each. */
async function post<T>(
  url: string,
  token: string | undefined,
  body: unknown,
  extra?: Record<string, string>,
): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json", ...extra };
  if (token) headers["authorization"] = `Bearer ${token}`;
  for (let attempt = 0; ; attempt++) {
    const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) }).catch((err: Error) => err);
    if (!(r instanceof Error) && r.ok) return (await r.json()) as T;
    // a 503 (a backend's circuit open under the burst) or a connection that failed: again, a few times
    if (attempt >= 4 || (!(r instanceof Error) && r.status !== 503 && r.status !== 429)) {
      throw new Error(`POST ${url}: ${r instanceof Error ? r.message : `${r.status} ${await r.text()}`}`);
    }
    await new Promise((res) => setTimeout(res, 200 * 2 ** attempt));
  }
}

/** `n` agents, registered `width` at a time, agent i on node i % urls.length. */
export async function registerAgents(
  urls: string[],
  n: number,
  label: string,
  width = 64,
  progress?: (done: number) => void,
): Promise<Registered[]> {
  const out: Registered[] = new Array(n);
  let done = 0;
  await pool(
    Array.from({ length: n }, (_, i) => i),
    width,
    async (i) => {
      const r = await post<{ agent: { id: string }; token: string }>(
        `${urls[i % urls.length]}/v1/agents/register`,
        undefined,
        { display_name: `${label}-${i}` },
      );
      out[i] = { id: r.agent.id, token: r.token };
      if (++done % 5000 === 0) progress?.(done);
    },
  );
  return out;
}

/** A group owned by `owner` with `members` (at most 1,000 listed in one request): its id. */
export async function createGroup(url: string, owner: Registered, members: string[], name: string): Promise<string> {
  const r = await post<{ group: { id: string } }>(`${url}/v1/groups`, owner.token, { name, members }, keyHeader());
  return r.group.id;
}

/** More members (at most 1,000 at a time) into `owner`'s group. */
export async function addMembers(url: string, owner: Registered, group: string, members: string[]): Promise<void> {
  await post(`${url}/v1/groups/${group}/members`, owner.token, { members });
}

/** One message from `owner` to its group. */
export async function sendToGroup(url: string, owner: Registered, group: string, body: string): Promise<void> {
  await post(`${url}/v1/groups/${group}/messages`, owner.token, { body }, keyHeader());
}
