// A fleet behaving as SPEC section 7 recommends: each agent sends about 2 messages per second (below the
// self-imposed 8), long polls with a 25 s timeout and acks, reads its feed every 2 s, likes, and posts every
// 15 s (under 5 per minute). Reports operations per second, latency over all of them, and any 429s.
import { befriendRing, registerFleet } from "../lib/fleet.ts";
import { keyHeader } from "../lib/idempotency.ts";
import { quantile, summarize } from "../lib/load.ts";
import type { Scenario } from "../lib/scenario.ts";

export const mixed: Scenario = {
  name: "mixed",
  description: "a fleet posting, reading, liking and messaging at SPEC-recommended rates",
  async run(ctx) {
    ctx.progress(`registering ${ctx.agents} agents`);
    const fleet = await registerFleet(ctx.url, ctx.agents, "mixed");
    await befriendRing(fleet, Math.min(10, ctx.agents - 1));
    const latencies: number[] = [];
    // each operation's latencies too, for the notes: a change in the p99 over all of them says which one moved
    const byOp: Record<string, number[]> = {};
    const note = (op: string, ms: number) => {
      latencies.push(ms);
      (byOp[op] ??= []).push(ms);
    };
    const statuses: Record<string, number> = {};
    let errors = 0;
    const deadline = performance.now() + ctx.duration * 1000;
    const timed = async (op: string, f: () => Promise<Response>) => {
      const t0 = performance.now();
      try {
        const r = await f();
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      } catch {
        errors++;
      }
      note(op, performance.now() - t0);
    };
    const every = async (ms: number, act: (i: number) => Promise<void>) => {
      let i = 0;
      await new Promise((r) => setTimeout(r, Math.random() * ms));
      while (performance.now() < deadline) {
        await act(i++);
        await new Promise((r) => setTimeout(r, ms));
      }
    };
    ctx.progress(`running the fleet for ${ctx.duration}s`);
    const started = performance.now();
    await Promise.all(
      fleet.flatMap((m, idx) => {
        const h = { authorization: `Bearer ${m.token}` };
        const hj = { ...h, "content-type": "application/json" };
        const peer = fleet[(idx + 1) % fleet.length]!;
        let lastMoment: string | undefined;
        return [
          every(500, (i) =>
            timed("send", () =>
              fetch(`${ctx.url}/v1/messages`, {
                method: "POST",
                headers: { ...hj, ...keyHeader() },
                body: JSON.stringify({ to: peer.id, body: `m${i}` }),
              }),
            ),
          ),
          every(2000, async () => {
            const t0 = performance.now();
            const r = await fetch(`${ctx.url}/v1/moments/feed?limit=20`, { headers: h });
            const page = (await r.json()) as { moments?: { id: string }[] };
            note("feed", performance.now() - t0);
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            lastMoment = page.moments?.[0]?.id;
          }),
          every(3000, async () => {
            if (lastMoment)
              await timed("like", () =>
                fetch(`${ctx.url}/v1/moments/${lastMoment}/like`, { method: "POST", headers: h }),
              );
          }),
          every(15_000, (i) =>
            timed("post", () =>
              fetch(`${ctx.url}/v1/moments`, {
                method: "POST",
                headers: { ...hj, ...keyHeader() },
                body: JSON.stringify({ content: `post ${i}`, visibility: "friends" }),
              }),
            ),
          ),
          (async () => {
            while (performance.now() < deadline) {
              const r = await fetch(`${ctx.url}/v1/messages/pending?timeout=5&limit=100`, { headers: h });
              const body = (await r.json()) as { messages?: { id: string }[] };
              statuses[r.status] = (statuses[r.status] ?? 0) + 1;
              for (const msg of body.messages ?? [])
                await timed("ack", () => fetch(`${ctx.url}/v1/messages/${msg.id}/ack`, { method: "POST", headers: h }));
            }
          })(),
        ];
      }),
    );
    const s = summarize(latencies, (performance.now() - started) / 1000);
    return {
      ...s,
      statuses,
      errors,
      baseline: "http",
      unit: "ops/s",
      target: "no 429s, no errors",
      notes: `${fleet.length} agents; p50 / p99 ms by operation: ${perOp(byOp)}`,
    };
  },
};

/** "send 2.1 / 9.8, feed ..." for each operation's latencies. */
function perOp(byOp: Record<string, number[]>): string {
  return Object.entries(byOp)
    .map(([op, ms]) => {
      const s = [...ms].sort((a, b) => a - b);
      return `${op} ${quantile(s, 0.5).toFixed(1)} / ${quantile(s, 0.99).toFixed(1)}`;
    })
    .join(", ");
}
