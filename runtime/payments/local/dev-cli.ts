// `npm run payments:dev`: starts the local chain (Hardhat 2 on 127.0.0.1:8545), deploys Flock USD, funds
// Hardhat's test accounts #2-#4 with 1,000 fUSD each, starts the local facilitator (127.0.0.1:4020) and the local
// explorer (127.0.0.1:4021, transaction pages at /tx/<hash>) and prints the environment to start Flock with.
// Ctrl-C stops everything. PAYMENTS_CHAIN_PORT / PAYMENTS_FACILITATOR_PORT / PAYMENTS_EXPLORER_PORT move the ports.
import { getAddress } from "viem";
import { hardhatAccount, startPaymentsEnv } from "./dev.ts";

const wallets = [2, 3, 4].map((i) => ({ i, account: hardhatAccount(i) }));
const e = await startPaymentsEnv({
  fund: wallets.map((w) => w.account.address),
  chainPort: Number(process.env["PAYMENTS_CHAIN_PORT"] ?? 8545),
  facilitatorPort: Number(process.env["PAYMENTS_FACILITATOR_PORT"] ?? 4020),
  explorerPort: Number(process.env["PAYMENTS_EXPLORER_PORT"] ?? 4021),
});
const hex = (b: Uint8Array | null) => (b ? `0x${Buffer.from(b).toString("hex")}` : "?");
console.log(`local chain     ${e.chain.rpcUrl} (chain id 31337, network ${e.network})`);
console.log(`Flock USD       ${getAddress(e.token)} (fUSD, 6 decimals, EIP-712 "Flock USD" version "1")`);
console.log(`facilitator     ${e.facilitator.url} (gas paid by ${hardhatAccount(1).address})`);
console.log(`explorer        ${e.explorer.txUrl}<hash>`);
console.log("\nfunded test wallets (1,000 fUSD each; Hardhat's public test keys, never use them elsewhere):");
for (const w of wallets) console.log(`  #${w.i} ${w.account.address}  key ${hex(w.account.getHdKey().privateKey)}`);
console.log("\nstart Flock with:");
for (const [k, v] of Object.entries(e.env)) console.log(`  export ${k}=${v}`);
console.log(`\nthen: PATCH /v1/agents/me {"x402_enabled":true,"price":0.05,"pay_to":"0x...","network":"${e.network}"}`);
console.log("Ctrl-C stops the chain, the facilitator and the explorer.");

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await e.stop();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
