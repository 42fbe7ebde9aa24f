// Helpers for the moments / friends / feed tests.
import { call, type Registered, registerAgent } from "./http.ts";

/**
 * A peer that sends messages it never sees acked: `keep(to)` sends one (so a long poll of `to` answers at once),
 * `newAgent()` registers an agent (named `label`) with one waiting. The fuzz and the cost suites act as these.
 */
export async function keptPending(base: string, label: string) {
  const peer = await registerAgent(base, "peer");
  const keep = async (to: Registered) => {
    const r = await call(base, "POST", "/v1/messages", {
      token: peer.token,
      json: { to: to.id, body: "kept pending" },
    });
    if (r.status !== 201) throw new Error(`send failed: ${r.status} ${r.text}`);
    return r.body as { id: string; thread_id: string };
  };
  const newAgent = async () => {
    const a = await registerAgent(base, label);
    await keep(a);
    return a;
  };
  return { peer, keep, newAgent };
}

export type Visibility = "public" | "friends" | "private";

export interface Posted {
  id: string;
  content: string;
  visibility: Visibility;
  created_at: string;
}

/** Publishes a moment; throws unless 201. */
export async function post(
  base: string,
  who: Registered,
  visibility: Visibility,
  content = `${visibility} by ${who.id}`,
): Promise<Posted> {
  const r = await call(base, "POST", "/v1/moments", { token: who.token, json: { content, visibility } });
  if (r.status !== 201) throw new Error(`post failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Makes two principals friends (request + accept); throws on any other outcome. */
export async function befriend(base: string, a: Registered, b: Registered): Promise<void> {
  const req = await call(base, "POST", "/v1/friends/request", { token: a.token, json: { to: b.id } });
  // 201 to an agent (or accepted at once), 202 to a person
  if (req.status !== 201 && req.status !== 202) throw new Error(`friend request failed: ${req.status} ${req.text}`);
  if (req.body.request.status === "accepted") return;
  const acc = await call(base, "POST", `/v1/friends/requests/${req.body.request.id}/accept`, { token: b.token });
  if (acc.status !== 200) throw new Error(`accept failed: ${acc.status} ${acc.text}`);
}

export async function unfriend(base: string, a: Registered, b: Registered): Promise<void> {
  const r = await call(base, "DELETE", `/v1/friends/${b.id}`, { token: a.token });
  if (r.status !== 204) throw new Error(`unfriend failed: ${r.status} ${r.text}`);
}

export interface FeedMoment extends Posted {
  author: { id: string; display_name: string };
  like_count: number;
  comment_count: number;
}

export async function feedPage(
  base: string,
  who: Registered,
  query = "",
): Promise<{ moments: FeedMoment[]; has_more: boolean }> {
  const r = await call(base, "GET", `/v1/moments/feed${query}`, { token: who.token });
  if (r.status !== 200) throw new Error(`feed failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Walks the whole feed page by page; `between` runs after each page (to post or flush mid-walk). */
export async function walkFeed(
  base: string,
  who: Registered,
  limit: number,
  between?: (page: number) => Promise<void>,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let before: string | undefined;
  let pages = 0;
  for (;;) {
    const q = `?limit=${limit}${before ? `&before=${before}` : ""}`;
    const page = await feedPage(base, who, q);
    pages++;
    for (const m of page.moments) ids.push(m.id);
    if (!page.has_more) break;
    if (page.moments.length !== limit) throw new Error(`short page with has_more: ${page.moments.length}`);
    before = page.moments[page.moments.length - 1]!.id;
    if (between) await between(pages);
  }
  return { ids, pages };
}

/** Numeric part of a moment id, for ordering checks. */
export const num = (id: string) => BigInt(id.slice(id.indexOf("_") + 1));
