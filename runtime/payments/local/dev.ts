// The whole local payments setup in one call: the chain, the token deployed and wallets funded, the
// facilitator, and the explorer that the payments' transaction links open. Used by `npm run payments:dev` (dev-cli.ts) and by the payment tests (once per test file).
import { type Account, getAddress, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { HARDHAT_MNEMONIC, LOCAL_CHAIN_ID, type LocalChain, startLocalChain } from "./chain.ts";
import { type LocalExplorer, startLocalExplorer } from "./explorer.ts";
import { type LocalFacilitator, startLocalFacilitator } from "./facilitator.ts";
import { deployToken, LOCAL_TOKEN, mint } from "./token.ts";

interface PaymentsEnv {
  chain: LocalChain;
  facilitator: LocalFacilitator;
  explorer: LocalExplorer;
  token: Hex;
  network: `eip155:${number}`;
  /** Hardhat account #0: deployed the token and mints it. */
  minter: Account;
  /** The environment a Flock node needs to take payments on this chain. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Hardhat's default account `i` (0: token owner, 1: facilitator gas payer, 2+: funded test wallets). */
export const hardhatAccount = (i: number) => mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: i });

export async function startPaymentsEnv(
  opts: {
    fund?: Hex[];
    amount?: bigint;
    chainPort?: number;
    facilitatorPort?: number;
    explorerPort?: number;
    /** Aborting it while the setup starts stops what has started and rejects. */
    signal?: AbortSignal;
  } = {},
): Promise<PaymentsEnv> {
  const chain = await startLocalChain({ port: opts.chainPort, signal: opts.signal });
  try {
    const minter = hardhatAccount(0);
    const token = await deployToken(chain.rpcUrl, minter);
    if (opts.fund?.length)
      await mint(chain.rpcUrl, minter, token, opts.fund, opts.amount ?? 1_000n * 10n ** BigInt(LOCAL_TOKEN.decimals));
    const network = `eip155:${LOCAL_CHAIN_ID}` as const;
    opts.signal?.throwIfAborted();
    const explorer = await startLocalExplorer({
      rpcUrl: chain.rpcUrl,
      chainId: LOCAL_CHAIN_ID,
      port: opts.explorerPort,
    });
    const facilitator = await startLocalFacilitator({
      rpcUrl: chain.rpcUrl,
      payer: hardhatAccount(1),
      network,
      port: opts.facilitatorPort,
    }).catch(async (err: unknown) => {
      await explorer.stop();
      throw err;
    });
    if (opts.signal?.aborted) {
      await facilitator.stop();
      await explorer.stop();
      opts.signal.throwIfAborted();
    }
    return {
      chain,
      facilitator,
      explorer,
      token,
      network,
      minter,
      env: {
        FACILITATOR_URL: facilitator.url,
        FLOCK_LOCAL_TOKEN: getAddress(token),
        FLOCK_LOCAL_CHAIN_ID: String(LOCAL_CHAIN_ID),
        FLOCK_LOCAL_EXPLORER_URL: explorer.txUrl,
      },
      async stop() {
        await facilitator.stop();
        await explorer.stop();
        await chain.stop();
      },
    };
  } catch (err) {
    await chain.stop();
    throw err;
  }
}
