// Deploys and funds Flock USD (contracts/FlockUSD.sol, compiled into contracts/FlockUSD.json) on a chain
// reached over JSON-RPC. Development and tests only.
import { readFileSync } from "node:fs";
import { type Abi, type Account, createPublicClient, createWalletClient, defineChain, type Hex, http } from "viem";

interface TokenArtifact {
  abi: Abi;
  bytecode: Hex;
}

const TOKEN_ARTIFACT = JSON.parse(
  readFileSync(new URL("../../../contracts/FlockUSD.json", import.meta.url), "utf8"),
) as TokenArtifact;

/** The local token's EIP-712 domain name and version, symbol and decimals (as in FlockUSD.sol). */
export const LOCAL_TOKEN = { name: "Flock USD", version: "1", symbol: "fUSD", decimals: 6 } as const;

export function localChain(rpcUrl: string, id = 31337) {
  return defineChain({
    id,
    name: "Flock local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function clients(rpcUrl: string, account: Account) {
  const chain = localChain(rpcUrl);
  return {
    chain,
    pub: createPublicClient({ chain, transport: http(rpcUrl) }),
    wallet: createWalletClient({ chain, account, transport: http(rpcUrl) }),
  };
}

/** Deploys the token from `deployer` (who becomes its minter); answers its address. */
export async function deployToken(rpcUrl: string, deployer: Account): Promise<Hex> {
  const { pub, wallet } = clients(rpcUrl, deployer);
  const hash = await wallet.deployContract({ abi: TOKEN_ARTIFACT.abi, bytecode: TOKEN_ARTIFACT.bytecode, args: [] });
  const receipt = await pub.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error("FlockUSD deployment produced no contract");
  return receipt.contractAddress;
}

/** Mints `amount` atomic units (6 decimals) to each address. */
export async function mint(rpcUrl: string, owner: Account, token: Hex, to: Hex[], amount: bigint): Promise<void> {
  const { pub, wallet } = clients(rpcUrl, owner);
  for (const addr of to) {
    const hash = await wallet.writeContract({
      address: token,
      abi: TOKEN_ARTIFACT.abi,
      functionName: "mint",
      args: [addr, amount],
    });
    await pub.waitForTransactionReceipt({ hash });
  }
}

export async function balanceOf(rpcUrl: string, token: Hex, who: Hex): Promise<bigint> {
  const pub = createPublicClient({ chain: localChain(rpcUrl), transport: http(rpcUrl) });
  return (await pub.readContract({
    address: token,
    abi: TOKEN_ARTIFACT.abi,
    functionName: "balanceOf",
    args: [who],
  })) as bigint;
}
