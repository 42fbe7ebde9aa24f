// `npm run payments:dev`: starts the local chain (Hardhat 2 on 127.0.0.1:8545), deploys Flock USD, funds
// Hardhat's test accounts #2-#4 with 1,000 fUSD each, starts the local facilitator (127.0.0.1:4020) and the local
// explorer (127.0.0.1:4021, transaction pages at /tx/<hash>) and prints the environment to start Flock with.
// Ctrl-C (SIGINT) or SIGTERM stops everything, also while it starts, and exits once the chain has exited.
// PAYMENTS_CHAIN_PORT / PAYMENTS_FACILITATOR_PORT / PAYMENTS_EXPLORER_PORT move the ports; a port in use is one
// line naming it and its variable, exit 1.
import { getAddress } from "viem";
import { hardhatAccount, startPaymentsEnv } from "./dev.ts";

const PORTS = [
  { what: "the local chain", env: "PAYMENTS_CHAIN_PORT", fallback: 8545 },
  { what: "the facilitator", env: "PAYMENTS_FACILITATOR_PORT", fallback: 4020 },
  { what: "the explorer", env: "PAYMENTS_EXPLORER_PORT", fallback: 4021 },
].map((p) => ({ ...p, port: Number(process.env[p.env] || p.fallback) }));
const [chainPort, facilitatorPort, explorerPort] = PORTS.map((p) => p.port);

const wallets = [2, 3, 4].map((i) => ({ i, account: hardhatAccount(i) }));
const starting = new AbortController();
const started = startPaymentsEnv({
  fund: wallets.map((w) => w.account.address),
  chainPort,
  facilitatorPort,
  explorerPort,
  signal: starting.signal,
});
// the handlers come before the start finishes: a signal while the chain starts stops it too (the start then stops
// what it started and rejects), and the process exits once everything has stopped
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  starting.abort();
  await started.then(
    (env) => env.stop(),
    () => {},
  );
  process.exit(0);
};
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void stop());

let e: Awaited<typeof started>;
try {
  e = await started;
} catch (err) {
  if (stopping) await new Promise(() => {}); // stop() exits once the start has cleaned up
  const inUse = err as { code?: unknown; port?: unknown };
  const port = PORTS.find((p) => inUse.code === "EADDRINUSE" && p.port === inUse.port);
  if (!port) throw err;
  console.error(
    `payments:dev: port ${port.port} (${port.what}) is in use on 127.0.0.1: stop what listens there, or set ${port.env} to another port`,
  );
  process.exit(1);
}
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
