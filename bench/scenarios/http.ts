// Request/response scenarios driven by autocannon over real sockets: feed, like, post, send, hot.
import { befriendRing, type Member, registerFleet } from "../lib/fleet.ts";
import { keyHeader } from "../lib/idempotency.ts";
import { type BuiltRequest, load } from "../lib/load.ts";
import type { Scenario, ScenarioContext, ScenarioResult } from "../lib/scenario.ts";

const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function socialFleet(ctx: ScenarioContext, label: string, posts: number): Promise<Member[]> {
  ctx.progress(`registering ${ctx.agents} agents`);
  const fleet = await registerFleet(ctx.url, ctx.agents, label);
  ctx.progress("making friends (50 each)");
  await befriendRing(fleet, 50);
  ctx.progress(`posting ${posts} moments each`);
  for (let p = 0; p < posts; p++) {
    await Promise.all(
      fleet.map((m, i) =>
        m.flock.post({
          content: `moment ${p} of ${i}`,
          visibility: (["public", "friends", "private"] as const)[(i + p) % 3]!,
        }),
      ),
    );
  }
  return fleet;
}

/** Runs autocannon over `next` for the scenario's duration and reports it against the HTTP baseline. */
async function measure(
  ctx: ScenarioContext,
  what: string,
  next: () => BuiltRequest,
  target: string,
): Promise<ScenarioResult> {
  ctx.progress(`${what} for ${ctx.duration}s`);
  const r = await load({ url: ctx.url, connections: ctx.connections, duration: ctx.duration, next });
  return { ...r, baseline: "http", unit: "req/s", target };
}

export const feed: Scenario = {
  name: "feed",
  description: "warm feed reads of 20 items for agents with 50 friends",
  async run(ctx) {
    const fleet = await socialFleet(ctx, "feed", 5);
    let k = 0;
    const next = () => ({
      method: "GET" as const,
      path: "/v1/moments/feed?limit=20",
      headers: auth(fleet[k++ % fleet.length]!.token),
    });
    ctx.progress("warming");
    await load({ url: ctx.url, connections: ctx.connections, duration: 1, next });
    return measure(ctx, "reading feeds", next, ">= 0.25x, p99 < 10 ms");
  },
};

export const like: Scenario = {
  name: "like",
  description: "like/unlike pairs on friends' moments",
  async run(ctx) {
    const fleet = await socialFleet(ctx, "like", 1);
    const page = await fleet[0]!.flock.feed({ limit: 50 });
    const ids = page.moments.filter((m) => m.visibility === "public").map((m) => m.id);
    let k = 0;
    const next = () => {
      const i = k++;
      const pair = i >> 1;
      const who = fleet[pair % fleet.length]!;
      const id = ids[pair % ids.length]!;
      return {
        method: i % 2 === 0 ? ("POST" as const) : ("DELETE" as const),
        path: `/v1/moments/${id}/like`,
        headers: auth(who.token),
      };
    };
    return measure(ctx, "liking and unliking", next, ">= 0.15x");
  },
};

export const post: Scenario = {
  name: "post",
  description: "moment creation with fan-out to 50 friends",
  async run(ctx) {
    const fleet = await socialFleet(ctx, "post", 0);
    let k = 0;
    const next = () => {
      const i = k++;
      const m = fleet[i % fleet.length]!;
      return {
        method: "POST" as const,
        path: "/v1/moments",
        headers: { ...json(m.token), ...keyHeader() },
        body: JSON.stringify({ content: `load ${i}`, visibility: "friends" }),
      };
    };
    return measure(ctx, "posting", next, "(no target)");
  },
};

/** Direct messages over the fleet, each durable before its 201; `pair` picks the i-th send's sender and recipient. */
async function directSends(
  ctx: ScenarioContext,
  label: string,
  pair: (fleet: Member[], i: number) => [Member, Member],
  what: string,
  target: string,
) {
  ctx.progress(`registering ${ctx.agents} agents`);
  const fleet = await registerFleet(ctx.url, ctx.agents, label);
  let k = 0;
  const next = () => {
    const i = k++;
    const [from, to] = pair(fleet, i);
    return {
      method: "POST" as const,
      path: "/v1/messages",
      headers: { ...json(from.token), ...keyHeader() },
      body: JSON.stringify({ to: to.id, body: `hello ${i}` }),
    };
  };
  return measure(ctx, what, next, target);
}

export const send: Scenario = {
  name: "send",
  description: "direct messages, each durable in Postgres before its 201",
  run: (ctx) =>
    directSends(
      ctx,
      "send",
      (fleet, i) => {
        const from = fleet[i % fleet.length]!;
        const to = fleet[(i * 7 + 1) % fleet.length]!;
        return [from, to.id === from.id ? fleet[(i + 1) % fleet.length]! : to];
      },
      "sending",
      ">= 0.08x",
    ),
};

/**
 * A hot recipient: every agent of the fleet sends to one (a popular paid agent's inbox, minus the payment). Its
 * inbox and thread rows are shared by every send, so this shows whether one recipient serialises the send path;
 * `send` spreads the same load over the fleet.
 */
export const hot: Scenario = {
  name: "hot",
  description: "direct messages from the whole fleet to one recipient",
  run: (ctx) =>
    directSends(
      ctx,
      "hot",
      (fleet, i) => [fleet[1 + (i % (fleet.length - 1))]!, fleet[0]!],
      `sending to one recipient from ${ctx.agents - 1} agents`,
      "(no target: compare with send)",
    ),
};
