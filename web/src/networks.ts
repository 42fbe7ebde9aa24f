// Payment networks by name: the app shows "Base" or "Local test chain (31337)", never the CAIP-2 id it is given
// (`eip155:8453`); a network not in this table is shown as its chain ("Chain 1234"), the id itself when not EVM.

const NAMES: Readonly<Record<string, string>> = {
  "eip155:196": "X Layer",
  "eip155:8453": "Base",
  "eip155:84532": "Base Sepolia",
  "eip155:1": "Ethereum",
  "eip155:11155111": "Sepolia",
};

/** The chain ids of local development chains (hardhat's and anvil's). */
const LOCAL = new Set(["31337", "1337"]);

export function networkName(network: string): string {
  const known = NAMES[network];
  if (known) return known;
  const chain = /^eip155:(\d+)$/.exec(network)?.[1];
  if (!chain) return network;
  return LOCAL.has(chain) ? `Local test chain (${chain})` : `Chain ${chain}`;
}
