// The injected wallet (EIP-1193 `window.ethereum`): accounts, personal_sign for sign-in, and eth_signTypedData_v4
// for paying paid agents with an EIP-3009 TransferWithAuthorization (x402's exact scheme), sent as PAYMENT-SIGNATURE.
import type { PaymentHandler, PaymentRequired } from "@flock/client";

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export function injectedWallet(): Eip1193 | null {
  const eth = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  return eth && typeof eth.request === "function" ? eth : null;
}

export async function requestAccount(): Promise<string> {
  const eth = injectedWallet();
  if (!eth) throw new Error("No wallet found in this browser.");
  const accounts = (await eth.request({ method: "eth_requestAccounts" })) as string[];
  const first = accounts[0];
  if (!first) throw new Error("The wallet shared no account.");
  return first;
}

/** The first account the injected wallet already shares (no prompt) that is one of `among`; none without a wallet. */
export async function heldAccount(among: readonly string[]): Promise<string | undefined> {
  const eth = injectedWallet();
  if (!eth) return undefined;
  const wanted = new Set(among.map((a) => a.toLowerCase()));
  try {
    const accounts = (await eth.request({ method: "eth_accounts" })) as string[];
    return accounts.find((a) => wanted.has(a.toLowerCase()));
  } catch {
    return undefined; // a wallet that will not say: paying waits for the person to link it again
  }
}

const toHex = (s: string) =>
  `0x${Array.from(new TextEncoder().encode(s), (b) => b.toString(16).padStart(2, "0")).join("")}`;

export async function personalSign(address: string, message: string): Promise<string> {
  const eth = injectedWallet();
  if (!eth) throw new Error("No wallet found in this browser.");
  return (await eth.request({ method: "personal_sign", params: [toHex(message), address] })) as string;
}

type Requirement = PaymentRequired["accepts"][number];

const randomNonce = () =>
  `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")}`;

function base64Json(v: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(v));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Dollars of a requirement (every Flock asset has 6 decimals). */
export const priceOf = (r: { amount: string }) => Number(r.amount) / 1e6;

/**
 * Pays with the injected wallet: the cheapest exact EVM option is signed as an EIP-3009 authorization through
 * eth_signTypedData_v4. `confirm` is asked first with the price in dollars; refusing throws.
 */
export class WalletPayer implements PaymentHandler {
  constructor(
    private readonly address: string,
    private readonly confirm: (dollars: number, r: Requirement) => Promise<boolean>,
  ) {}

  async headersFor(required: PaymentRequired): Promise<Record<string, string>> {
    const eth = injectedWallet();
    if (!eth) throw new Error("No wallet to pay with.");
    const pick = required.accepts
      .filter((r) => r.scheme === "exact" && r.network.startsWith("eip155:") && /^\d+$/.test(r.amount))
      .sort((a, b) => (BigInt(a.amount) < BigInt(b.amount) ? -1 : 1))[0];
    if (!pick) throw new Error("This agent asks for a payment this wallet cannot make.");
    if (!(await this.confirm(priceOf(pick), pick))) throw new Error("Payment cancelled.");
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from: this.address,
      to: pick.payTo,
      value: pick.amount,
      validAfter: String(now - 600),
      validBefore: String(now + (pick.maxTimeoutSeconds || 300)),
      nonce: randomNonce(),
    };
    const extra = (pick.extra ?? {}) as { name?: string; version?: string };
    const typed = {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        TransferWithAuthorization: [
          { name: "from", type: "address" },
          { name: "to", type: "address" },
          { name: "value", type: "uint256" },
          { name: "validAfter", type: "uint256" },
          { name: "validBefore", type: "uint256" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "TransferWithAuthorization",
      domain: {
        name: extra.name,
        version: extra.version,
        chainId: Number(pick.network.split(":")[1]),
        verifyingContract: pick.asset,
      },
      message: authorization,
    };
    const signature = (await eth.request({
      method: "eth_signTypedData_v4",
      params: [this.address, JSON.stringify(typed)],
    })) as string;
    const payload = {
      x402Version: required.x402Version,
      ...(required.resource ? { resource: required.resource } : {}),
      accepted: pick,
      payload: { authorization, signature },
    };
    return { "PAYMENT-SIGNATURE": base64Json(payload) };
  }
}
