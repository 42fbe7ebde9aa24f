// Claims a stopped node left behind (a claim is written before the facilitator is asked) are marked failed,
// not retryable, once they are older than any request can take; live claims and finished payments stay.
import t from "tap";
import { insertPaidDirect } from "../runtime/messaging/messages-store.ts";
import { claim } from "../runtime/payments/payments-store.ts";
import { ABANDONED_REASON, sweepAbandonedClaims } from "../runtime/payments/claims-sweep-store.ts";
import { CLAIM_ABANDONED_MS } from "../runtime/payments/sweep.ts";
import { call, registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { until } from "./helpers/wait.ts";

const node = await startTestNode(t, { engine: "memory" });
const sql = node.svc.sql;
const alice = await registerAgent(node.url, "Alice");
const oracle = await registerAgent(node.url, "Oracle");

const hex = (n: number, len: number) => `0x${n.toString(16).padStart(len, "0")}`;
let seq = 1;
/** A payments row as claim() writes it, then aged and given a status directly. */
async function payment(status: "claimed" | "settled" | "failed", ageMs: number) {
  const c = {
    id: node.svc.ids.nextRaw(),
    network: "eip155:31337",
    asset: hex(0xa55e7, 40),
    payer: hex(0xbeef, 40),
    nonce: hex(seq++, 64),
    payTo: hex(0xcafe, 40),
    amount: 250_000n,
    priceMicros: 250_000n,
    from: alice.id,
    to: oracle.id,
  };
  t.equal(await claim(sql, c), c.id);
  await sql`
    update payments set status = ${status}, tx_hash = ${status === "settled" ? hex(7, 64) : null},
      updated_at = now() - make_interval(secs => ${ageMs / 1000})
    where id = ${String(c.id)}`;
  return c;
}
const statusOf = async (id: bigint) =>
  (
    await sql<{ status: string; retryable: boolean; reason: string | null }[]>`
    select status, retryable, reason from payments where id = ${String(id)}`
  )[0]!;

t.test("an abandoned claim is marked failed for good; a live claim and finished payments are left", async (t) => {
  const abandoned = await payment("claimed", CLAIM_ABANDONED_MS + 60_000);
  const live = await payment("claimed", 30_000);
  const settled = await payment("settled", CLAIM_ABANDONED_MS * 3);
  t.equal(await sweepAbandonedClaims(sql, CLAIM_ABANDONED_MS), 1);
  t.same(await statusOf(abandoned.id), { status: "failed", retryable: false, reason: ABANDONED_REASON });
  t.same(
    await statusOf(live.id),
    { status: "claimed", retryable: false, reason: null },
    "a request may still be working on it",
  );
  t.equal((await statusOf(settled.id)).status, "settled");
  t.equal(await sweepAbandonedClaims(sql, CLAIM_ABANDONED_MS), 0, "nothing left to sweep");

  t.equal(
    await claim(sql, { ...abandoned, id: node.svc.ids.nextRaw() }),
    null,
    "the authorization stays used (409): it may be on chain",
  );
  const mine = await call(node.url, "GET", "/v1/payments?direction=sent", { token: alice.token });
  t.match(
    mine.body.payments.find((p: { id: string }) => p.id.endsWith(abandoned.id.toString())),
    { status: "failed", reason: ABANDONED_REASON, transaction: null },
    "the payer sees why",
  );
});

t.test(
  "a settlement that completes after the sweep still records itself as settled, without the sweep's reason",
  async (t) => {
    const late = await payment("claimed", CLAIM_ABANDONED_MS + 60_000);
    t.equal(await sweepAbandonedClaims(sql, CLAIM_ABANDONED_MS), 1);
    const threadId = (await node.svc.hub.directThread(alice.id, oracle.id))!;
    const message = {
      id: node.svc.ids.nextRaw(),
      threadId,
      sender: alice.id,
      recipient: oracle.id,
      body: "late",
      createdAt: new Date(),
    };
    const stored = await insertPaidDirect(sql, message, { paymentId: late.id, txHash: hex(9, 64), explorerUrl: null });
    t.equal(stored, 1, "stored as the first message of the oracle's inbox");
    t.same(await statusOf(late.id), { status: "settled", retryable: false, reason: null });
  },
);

t.test("a node sweeps when it starts", async (t) => {
  const abandoned = await payment("claimed", CLAIM_ABANDONED_MS + 60_000);
  await startTestNode(t, { engine: "memory", schema: node.schema });
  await until(async () => (await statusOf(abandoned.id)).status === "failed", 5_000);
  t.equal((await statusOf(abandoned.id)).reason, ABANDONED_REASON);
});
