// `flockctl pay` settles a real payment: a node on a local chain (Hardhat 2) with the local facilitator, a paid agent,
// and the CLI paying from a funded test wallet (FLOCK_PRIVATE_KEY). The message is stored, its payment row settled,
// the tokens moved, and every price the CLI prints is in dollars; a price above --max is refused, in dollars, before
// anything is signed. --json keeps the API's fields (amounts in atomic units).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import t from "tap";
import { hardhatAccount, startPaymentsEnv } from "../runtime/payments/local/dev.ts";
import { balanceOf } from "../runtime/payments/local/token.ts";
import { TEST_DATABASE_URL } from "./helpers/env.ts";
import { startTestNode } from "./helpers/node.ts";
import { paidAgent } from "./payments-helpers.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const NO_LOGIN = mkdtempSync(join(tmpdir(), "flockctl-pay-"));
t.teardown(() => rmSync(NO_LOGIN, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI from its source (bin.js imports cli.ts; tsx loads it), stdout and stderr kept apart. */
function flockctl(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "client/bin.js", ...args], {
      cwd: ROOT,
      env: { PATH: process.env["PATH"] ?? "", XDG_CONFIG_HOME: NO_LOGIN, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

const wallet = hardhatAccount(3);
const key = `0x${Buffer.from(wallet.getHdKey().privateKey!).toString("hex")}`;
const chain = await startPaymentsEnv({ fund: [wallet.address] });
t.teardown(() => chain.stop());

t.test(
  "flockctl pay settles a payment and tells it in dollars; a price above --max is refused in dollars",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory", env: { ...chain.env, FLOCK_LIMITS_SCALE: "20" } });
    const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
    t.teardown(() => sql.end());
    const oracle = await paidAgent(node.url, chain.network, 0.05, "Oracle");
    const reg = await flockctl(["register", "Payer", "--json"], { FLOCK_URL: node.url });
    t.equal(reg.code, 0, reg.stderr);
    const me = JSON.parse(reg.stdout) as { agent: { id: string }; token: string };
    const env = { FLOCK_URL: node.url, FLOCK_TOKEN: me.token };
    const paying = { ...env, FLOCK_PRIVATE_KEY: key };
    const paymentRows = () =>
      sql.unsafe<
        { status: string; amount: string; message_id: string | null; from_principal: string; tx_hash: string | null }[]
      >(
        `select status, amount::text, message_id::text, from_principal, tx_hash from "${node.schema}".payments where to_principal = $1 order by id`,
        [oracle.id],
      );

    // the price, before paying: in dollars in the marketplace
    const market = await flockctl(["marketplace", "--q", "Oracle"], env);
    t.match(
      market.stdout,
      new RegExp(`^${oracle.id} {2}Oracle {2}\\$0\\.05 per message \\(${chain.network}\\)$`, "m"),
      "marketplace: $0.05 per message",
    );

    // the two refusals sign nothing and store nothing, the commands run one beside the other
    const [unpaid, tooDear] = await Promise.all([
      flockctl(["send", oracle.id, "free question?"], env),
      flockctl(["pay", oracle.id, "cheap question?", "--max", "0.01"], paying),
    ]);
    t.equal(unpaid.code, 6, "send to a paid agent: payment required");
    t.match(
      unpaid.stderr,
      `error 402 payment_required: ${oracle.id} is a paid agent: $0.05 per message, and send never pays. To pay it: FLOCK_PRIVATE_KEY=0x... flockctl pay ${oracle.id} <body> --max 0.05`,
    );
    t.equal(tooDear.code, 6, "a price above --max: payment required");
    t.equal(tooDear.stdout, "");
    t.match(
      tooDear.stderr,
      /^error 402 payment_required: the price \(\$0\.05\) is above --max \(\$0\.01\): nothing was paid; run again with --max 0\.05 to pay it$/m,
    );
    t.notMatch(tooDear.stderr, /units|50000/, "no atomic units in what a person reads");
    t.same(await paymentRows(), [], "nothing claimed, nothing paid");
    t.equal(await balanceOf(chain.chain.rpcUrl, chain.token, oracle.payTo), 0n);
    const tooDearJson = await flockctl(["pay", oracle.id, "cheap question?", "--max", "0.01", "--json"], paying);
    t.match(
      JSON.parse(tooDearJson.stderr),
      { error: "payment_required", message: /above --max \(\$0\.01\)/, accepts: [{ amount: "50000" }] },
      "--json: the requirements as the API gave them",
    );

    // paid: settled on chain, the message stored with its payment, the output in dollars
    const paid = await flockctl(["pay", oracle.id, "what is the answer?", "--max", "0.10"], paying);
    t.equal(paid.code, 0, paid.stderr);
    const line = /^sent (msg_(\d+)) in (thread_\d+), paid \$0\.05 \(tx (0x[0-9a-f]{64})\)$/.exec(paid.stdout.trim());
    t.ok(line, `the answer names the message and the price paid in dollars: ${paid.stdout}`);
    const [, msgId, msgNumber, threadId, tx] = line ?? [];
    t.equal(await balanceOf(chain.chain.rpcUrl, chain.token, oracle.payTo), 50_000n, "the payee got $0.05 on chain");
    t.match(
      await paymentRows(),
      [{ status: "settled", amount: "50000", message_id: msgNumber, from_principal: me.agent.id, tx_hash: tx }],
      "the payment row: settled, for this message",
    );
    const [stored] = await sql.unsafe<{ body: string; sender: string }[]>(
      `select body, sender from "${node.schema}".messages where id = $1`,
      [msgNumber!],
    );
    t.same(stored, { body: "what is the answer?", sender: me.agent.id }, "the message is stored");

    // what both sides read afterwards, in dollars; --json keeps atomic units
    const oracleEnv = { FLOCK_URL: node.url, FLOCK_TOKEN: oracle.token };
    const [sent, received, history, sentJson] = await Promise.all([
      flockctl(["payments"], env),
      flockctl(["payments", "--direction", "received"], oracleEnv),
      flockctl(["history", me.agent.id], oracleEnv),
      flockctl(["payments", "--json"], env),
    ]);
    t.match(
      sent.stdout,
      new RegExp(`sent \\$0\\.05 to ${oracle.id} {2}settled {2}tx ${tx}`),
      "payments: sent $0.05, settled",
    );
    t.match(
      received.stdout,
      new RegExp(`received \\$0\\.05 from ${me.agent.id} {2}settled`),
      "the payee's list: received $0.05",
    );
    t.match(
      history.stdout,
      new RegExp(`Payer \\(${me.agent.id}\\) in ${threadId}: what is the answer\\? \\[paid \\$0\\.05, tx ${tx}\\]`),
      "history: [paid $0.05]",
    );
    t.match(
      JSON.parse(sentJson.stdout),
      { payments: [{ status: "settled", amount: "50000", message_id: msgId }] },
      "--json: the API's atomic units",
    );
    for (const out of [paid.stdout, sent.stdout, received.stdout, history.stdout])
      t.notMatch(out, /units|50000/, "no atomic units in human output");
  },
);
