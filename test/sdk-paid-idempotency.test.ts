// A paid send with its Idempotency-Key, against a real node, a local chain and its facilitator: the unpaid attempt
// (402, not kept by the server) and the paid retry carry the same key, so a paid send whose answer was lost and is
// retried, or called again with its key, gets its first answer back: one message, paid and settled once.
import t from "tap";
import { Flock } from "../client/index.ts";
import { Payer } from "../client/payments.ts";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { balanceOf } from "../runtime/payments/local/token.ts";
import { randomIp } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { freshAccount } from "./payments-helpers.ts";

const payer = hardhatAccount(4);
const env = await startPaymentsEnv({ fund: [payer.address] });
t.teardown(() => env.stop());
const node = await startTestNode(t, { engine: "memory", env: env.env });

t.test("a paid send whose answer was lost: the retry with its key is answered, not paid again", async (t) => {
  const seen: { paid: boolean; key: string | null; status: number; replayed: boolean }[] = [];
  let dropPaid = true;
  // every request from its own address (the per-IP limits); the first paid answer is lost after the node settled it
  const losing: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("x-forwarded-for", randomIp());
    const res = await fetch(input, { ...init, headers });
    const paid = headers.has("payment-signature");
    seen.push({
      paid,
      key: headers.get("idempotency-key"),
      status: res.status,
      replayed: res.headers.get("idempotency-replayed") === "true",
    });
    if (paid && dropPaid) {
      dropPaid = false;
      await res.arrayBuffer();
      throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    }
    return res;
  };
  const oracle = new Flock({ baseUrl: node.url, fetch: losing });
  await oracle.register({ display_name: "Oracle" });
  const payTo = freshAccount().address;
  const me = await oracle.updateMe({ x402_enabled: true, price: 0.05, pay_to: payTo, network: env.network });
  const wallet = new Payer({ account: payer, maxPerMessage: 1, maxPerSession: 1 });
  const alice = new Flock({
    baseUrl: node.url,
    fetch: losing,
    payments: wallet,
    sendsPerSecond: 1000,
    retry: { baseMs: 1 },
  });
  await alice.register({ display_name: "Alice" });
  seen.length = 0;

  const sent = await alice.send(me.id, "paid, once", {}, { idempotencyKey: "paid-once-1" });
  t.match(sent.payment, { amount: "50000", payer: payer.address });
  t.same(
    seen.map((s) => [s.paid, s.key, s.status, s.replayed]),
    [
      [false, "paid-once-1", 402, false],
      [true, "paid-once-1", 201, false],
      [true, "paid-once-1", 201, true],
    ],
    "402, the paid attempt (its answer lost), and the retry answered with the first answer",
  );

  seen.length = 0;
  const again = await alice.send(me.id, "paid, once", {}, { idempotencyKey: "paid-once-1" });
  t.equal(again.id, sent.id, "called again with its key: the same message");
  t.same(again.payment, sent.payment);
  t.same(
    seen.map((s) => [s.paid, s.status, s.replayed]),
    [[false, 201, true]],
    "no 402 this time: nothing to sign",
  );

  t.equal(wallet.spent, 50_000n, "signed once");
  t.equal(await balanceOf(env.chain.rpcUrl, env.token, payTo as `0x${string}`), 50_000n, "settled once");
  const got = await oracle.pending({ timeout: 1 });
  t.same(
    got.map((m) => m.id),
    [sent.id],
    "delivered once",
  );
});
