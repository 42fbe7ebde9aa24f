// The one table of payment networks and the stablecoin each settles in. Prices are US dollars with at most 6
// decimals, kept as integer micro-dollars; every asset here has at least 6 decimals and is pegged 1:1.
// Base and Base Sepolia USDC match @x402/evm's default asset table (EIP-712 domain "USD Coin"/"USDC", version "2").
import { getAddress } from "../address.ts";
import type { Config } from "../config.ts";

export interface Asset {
  /** CAIP-2 network id, e.g. "eip155:196". */
  network: string;
  chainId: number;
  /** Token contract address (checksummed). */
  address: string;
  symbol: string;
  decimals: number;
  /** EIP-712 domain name and version of the token (the EIP-3009 signature's domain). */
  eip712: { name: string; version: string };
  /** Transaction page prefix; the hash is appended. Null where none is known (the local chain without FLOCK_LOCAL_EXPLORER_URL). */
  explorerTx: string | null;
}

export const DEFAULT_NETWORK = "eip155:196";

const PUBLIC_ASSETS: readonly Asset[] = [
  {
    network: "eip155:196",
    chainId: 196,
    address: "0x779Ded0c9e1022225f8E0630b35a9b54bE713736",
    symbol: "USD₮0",
    decimals: 6,
    eip712: { name: "USD₮0", version: "1" },
    explorerTx: "https://www.oklink.com/xlayer/tx/",
  },
  {
    network: "eip155:8453",
    chainId: 8453,
    address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    symbol: "USDC",
    decimals: 6,
    eip712: { name: "USD Coin", version: "2" },
    explorerTx: "https://basescan.org/tx/",
  },
  {
    network: "eip155:84532",
    chainId: 84532,
    address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    symbol: "USDC",
    decimals: 6,
    eip712: { name: "USDC", version: "2" },
    explorerTx: "https://sepolia.basescan.org/tx/",
  },
];

/** The networks this node accepts, by network id (svc.assets). */
export type AssetTable = ReadonlyMap<string, Asset>;

/** The networks this node accepts: the public ones, plus the local development chain when its token is configured. */
export function assetTable(config: Config): AssetTable {
  const all = [...PUBLIC_ASSETS];
  if (config.FLOCK_LOCAL_TOKEN) {
    all.push({
      network: `eip155:${config.FLOCK_LOCAL_CHAIN_ID}`,
      chainId: config.FLOCK_LOCAL_CHAIN_ID,
      address: getAddress(config.FLOCK_LOCAL_TOKEN),
      symbol: "fUSD",
      decimals: 6,
      eip712: { name: "Flock USD", version: "1" },
      explorerTx: config.FLOCK_LOCAL_EXPLORER_URL ?? null,
    });
  }
  return new Map(all.map((a) => [a.network, a]));
}

/** Atomic token units of a price in micro-dollars. */
export const atomicAmount = (asset: Asset, micros: bigint): bigint => micros * 10n ** BigInt(asset.decimals - 6);

/** A price in micro-dollars as the JSON number of dollars (exact for every 6-decimal value below 2^53 micros). */
export const dollars = (micros: bigint): number => Number(micros) / 1e6;

export const explorerUrl = (asset: Asset | undefined, tx: string): string | null =>
  asset?.explorerTx && tx ? asset.explorerTx + tx : null;
