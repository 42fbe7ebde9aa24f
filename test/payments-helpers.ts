// Helpers for the payment tests: a paid agent, payloads signed with the official x402 client, raw sends.
import { randomBytes } from "node:crypto";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { x402Client } from "@x402/fetch";
import { type Account, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { call, type Registered, registerAgent } from "./helpers/http.ts";

export const freshAccount = () => privateKeyToAccount(generatePrivateKey());

/** Registers an agent and makes it a paid agent paid at a fresh address. */
export async function paidAgent(base: string, network: string, price = 0.05, name = "Oracle") {
  const agent = await registerAgent(base, name);
  const payTo = freshAccount().address;
  const r = await call(base, "PATCH", "/v1/agents/me", {
    token: agent.token,
    json: { x402_enabled: true, price, pay_to: payTo, network },
  });
  if (r.status !== 200) throw new Error(`PATCH failed: ${r.status} ${r.text}`);
  return { ...agent, payTo: payTo as Hex };
}

export function x402For(account: Account) {
  return new x402Client().register("eip155:*", new ExactEvmScheme(account as never)).setSpendControls(false);
}

/** A PAYMENT-SIGNATURE header for `req` (optionally altered before signing), signed by `account`. */
export async function signedHeader(
  account: Account,
  req: PaymentRequirements,
  change: Partial<PaymentRequirements> = {},
): Promise<string> {
  const pr: PaymentRequired = {
    x402Version: 2,
    resource: { url: "http://127.0.0.1/v1/messages", description: "", mimeType: "application/json" },
    accepts: [{ ...req, ...change }],
  };
  const payload = await x402For(account).createPaymentPayload(pr);
  return encodePaymentSignatureHeader(payload);
}

/** A header whose authorization was valid only until `validBefore` (seconds), signed by hand with viem. */
export async function headerValidUntil(
  account: Account,
  req: PaymentRequirements,
  validBefore: number,
): Promise<string> {
  const authorization = {
    from: account.address,
    to: req.payTo as Hex,
    value: req.amount,
    validAfter: "0",
    validBefore: String(validBefore),
    nonce: `0x${randomBytes(32).toString("hex")}` as Hex,
  };
  const signature = await account.signTypedData!({
    domain: {
      name: req.extra["name"] as string,
      version: req.extra["version"] as string,
      chainId: Number(req.network.split(":")[1]),
      verifyingContract: req.asset as Hex,
    },
    types: {
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
    message: { ...authorization, value: BigInt(authorization.value), validAfter: 0n, validBefore: BigInt(validBefore) },
  });
  return encodePaymentSignatureHeader({ x402Version: 2, accepted: req, payload: { authorization, signature } });
}

export function sendRaw(
  base: string,
  from: Registered,
  to: string,
  body: string,
  headers: Record<string, string> = {},
) {
  return call(base, "POST", "/v1/messages", { token: from.token, json: { to, body }, headers });
}
