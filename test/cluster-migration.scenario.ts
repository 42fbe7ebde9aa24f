// Redis Cluster slots moved to another master under steady send traffic, direct and group: while a slot's keys have
// moved and the slot is not yet handed over, its old owner answers ASK for them, and after the hand-over MOVED; the
// cluster client follows both. Every send answers 201 (a migration is not an outage), and every message is delivered.
// Run by test/cluster.test.ts on its private cluster.
import type { Test } from "tap";
import { slotOf } from "../runtime/engines/redis/slots.ts";
import { call } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import type { RedisCluster } from "./helpers/redis-cluster.ts";
import { registerAgents, undelivered } from "./messaging-helpers.ts";
import { until } from "./helpers/wait.ts";

const SENDERS = 6;
const RECIPIENTS = 12;
/** Between two sends of one sender: traffic paced under the 10-a-second limit (a pace, not a wait for something). */
const PAUSE_MS = 160;

interface Outcome {
  /** When it was sent, and when answered (performance.now()). */
  sent: number;
  at: number;
  status: number;
  to: string;
  /** The error's message when the send did not answer 201. */
  error?: string;
}

export async function migration(t: Test, cluster: RedisCluster): Promise<void> {
  const node = await startTestNode(t, { env: { REDIS_URL: cluster.url } });
  const senders = await registerAgents(node.url, SENDERS, "sender");
  const recipients = await registerAgents(node.url, RECIPIENTS, "recipient");
  // a group of every recipient: its sends append over many slots at once
  const group = await call(node.url, "POST", "/v1/groups", {
    token: senders[0]!.token,
    json: { name: "moving", members: recipients.map((r) => r.id) },
  });
  t.equal(group.status, 201, "group created");
  const groupId = group.body.group.id as string;

  const accepted = new Map<string, Set<string>>(recipients.map((r) => [r.id, new Set()]));
  const outcomes: Outcome[] = [];
  let stop = false;
  const loops = senders.map(async (s, i) => {
    for (let n = 0; !stop; n++) {
      const toGroup = i === 0 && n % 3 === 0;
      const to = recipients[(i + n) % RECIPIENTS]!;
      const sent = performance.now();
      const r = await (
        toGroup
          ? call(node.url, "POST", `/v1/groups/${groupId}/messages`, { token: s.token, json: { body: `g${n}` } })
          : call(node.url, "POST", "/v1/messages", { token: s.token, json: { to: to.id, body: `${i}.${n}` } })
      ).catch(() => null);
      const status = r?.status ?? 0;
      const error = status === 201 ? undefined : JSON.stringify(r?.body ?? null);
      outcomes.push({
        sent,
        at: performance.now(),
        status,
        to: toGroup ? "group" : to.id,
        ...(error ? { error } : {}),
      });
      if (status === 201)
        for (const rid of toGroup ? recipients.map((x) => x.id) : [to.id]) accepted.get(rid)!.add(r!.body.id as string);
      await new Promise((res) => setTimeout(res, PAUSE_MS));
    }
  });

  // the slots of half the recipients go to another master, one by one, once their mailbox keys are filled
  const masters = cluster.nodes.filter((n) => n.role === "master").map((n) => n.port);
  const moving = recipients.slice(0, RECIPIENTS / 2);
  /** Per moved slot: whose mailbox it holds, and when it was half-moved. */
  const windows: { who: string; from: number; to: number }[] = [];
  let keysMoved = 0;
  try {
    await until(() => moving.every((r) => accepted.get(r.id)!.size > 0), {
      ms: 10_000,
      every: 10,
      what: "a message in each mailbox to move",
    });
    for (const r of moving) {
      const slot = slotOf(r.id);
      const from = await cluster.ownerOf(slot);
      const to = masters.find((p) => p !== from)!;
      const started = performance.now();
      // half-moved until a send into the slot (to its recipient or the group) is answered: the old owner's ASK, followed
      const halfMoved = async () => {
        const since = performance.now();
        const into = (o: Outcome) => o.sent > since && (o.to === r.id || o.to === "group");
        await until(() => outcomes.some(into), {
          ms: 10_000,
          every: 10,
          what: `a send into slot ${slot} while it moves`,
        });
      };
      keysMoved += await cluster.moveSlot(slot, to, halfMoved);
      windows.push({ who: r.id, from: started, to: performance.now() });
      t.equal(await cluster.ownerOf(slot), to, `slot ${slot} of ${r.id} moved from ${from} to ${to}`);
    }
    t.ok(keysMoved >= moving.length, `${keysMoved} keys moved with their slots`);
    // then a send into every moved slot again, now its new owner's (the old one answers MOVED)
    const after = (w: (typeof windows)[number]) =>
      outcomes.some((o) => o.to === w.who && o.sent > w.to && o.status === 201);
    await until(() => windows.every(after), { ms: 10_000, every: 10, what: "a send into each slot after its move" });
    const groupSends = () => outcomes.filter((o) => o.to === "group" && o.status === 201).length;
    await until(() => groupSends() > 3, { ms: 10_000, every: 10, what: "group sends among them" });
  } finally {
    stop = true;
    await Promise.all(loops);
  }

  const bad = outcomes.filter((o) => o.status !== 201);
  t.same(bad, [], "every send answered 201 while slots moved: no 503, no 500");
  // sends that wrote into a slot while it was moving: to its recipient, or to the group (every recipient)
  const during = outcomes.filter((o) =>
    windows.some((w) => (o.to === w.who || o.to === "group") && o.at >= w.from && o.at <= w.to),
  );
  t.ok(during.length > 0, `${during.length} sends wrote into a slot while it was moving`);

  const missing = await undelivered(node.url, recipients, accepted);
  t.same(missing, [], "every 201'd message delivered, on the moved slots too");
}
