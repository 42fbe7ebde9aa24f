// An agent's marketplace settings (paid_agents): reading them into the profile, and PATCH /v1/agents/me's
// changes to them. Enabling needs `pay_to`; the network must be one this node settles on (assets.ts). The
// statements: settings-store.ts.
import { getAddress } from "../address.ts";
import type { Sql } from "../db/client.ts";
import { invalid } from "../errors.ts";
import type { AgentMarketplace } from "../../schema/payments.ts";
import { type Asset, type AssetTable, DEFAULT_NETWORK, dollars } from "./assets.ts";
import { saveSettings, settingsForUpdate } from "./settings-store.ts";
import type { z } from "zod";

export interface PaidAgentRow {
  x402_enabled: boolean;
  price_micros: bigint | null;
  pay_to: string | null;
  network: string;
}

export interface SettingsChange {
  x402_enabled?: boolean;
  price?: bigint | null;
  pay_to?: string | null;
  network?: string;
}

const NONE: PaidAgentRow = { x402_enabled: false, price_micros: null, pay_to: null, network: DEFAULT_NETWORK };

export const hasSettings = (c: SettingsChange) =>
  c.x402_enabled !== undefined || c.price !== undefined || c.pay_to !== undefined || c.network !== undefined;

/** Whether messages to the agent must be paid: enabled, priced, and on a network this node supports. */
export function paidTerms(
  assets: AssetTable,
  row: PaidAgentRow | null | undefined,
): { asset: Asset; micros: bigint; payTo: string } | null {
  if (!row?.x402_enabled || row.price_micros === null || row.pay_to === null) return null;
  const asset = assets.get(row.network);
  return asset ? { asset, micros: row.price_micros, payTo: getAddress(row.pay_to) } : null;
}

export function marketplaceView(
  assets: AssetTable,
  row: PaidAgentRow | null | undefined,
): z.infer<typeof AgentMarketplace> {
  const r = row ?? NONE;
  const asset = assets.get(r.network);
  return {
    x402_enabled: r.x402_enabled,
    price: r.price_micros === null ? null : dollars(r.price_micros),
    currency: "USD",
    pay_to: r.pay_to === null ? null : getAddress(r.pay_to),
    network: r.network,
    asset: asset?.address ?? null,
    asset_symbol: asset?.symbol ?? null,
  };
}

/** Applies a change inside the caller's transaction (the agent row is already locked by its update). */
export async function updateSettings(tx: Sql, assets: AssetTable, principal: string, c: SettingsChange): Promise<void> {
  const cur = await settingsForUpdate(tx, principal);
  const next: PaidAgentRow = {
    x402_enabled: c.x402_enabled ?? cur?.x402_enabled ?? false,
    price_micros: c.price === undefined ? (cur?.price_micros ?? null) : c.price,
    pay_to: c.pay_to === undefined ? (cur?.pay_to ?? null) : c.pay_to === null ? null : c.pay_to.toLowerCase(),
    network: c.network ?? cur?.network ?? DEFAULT_NETWORK,
  };
  if (c.network !== undefined && !assets.has(c.network)) {
    const known = [...assets.keys()].join(", ");
    throw invalid(`network: ${c.network} is not supported here (supported: ${known})`, { field: "network" });
  }
  if (next.x402_enabled && next.pay_to === null) {
    throw invalid("pay_to: an EVM address to be paid at is required to enable x402", { field: "pay_to" });
  }
  await saveSettings(tx, principal, next);
}
