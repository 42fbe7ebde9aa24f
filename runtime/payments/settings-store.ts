// An agent's marketplace settings in Postgres (paid_agents): read for a change, and written (settings.ts decides
// what the change makes of them); read as terms (terms.ts caches them), and the paid members of a group.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import type { PaidAgentRow } from "./settings.ts";

/** The agent's settings, locked until the transaction ends; undefined when it has none yet. */
export async function settingsForUpdate(
  tx: Sql | TransactionSql,
  principal: string,
): Promise<PaidAgentRow | undefined> {
  const [cur] = await tx<PaidAgentRow[]>`
    select x402_enabled, price_micros, pay_to, network from paid_agents where principal = ${principal} for update`;
  return cur;
}

/** Writes the agent's settings (a row of its own when it has none yet). */
export async function saveSettings(tx: Sql | TransactionSql, principal: string, next: PaidAgentRow): Promise<void> {
  await tx`
    insert into paid_agents (principal, x402_enabled, price_micros, pay_to, network, updated_at)
    values (${principal}, ${next.x402_enabled}, ${next.price_micros === null ? null : String(next.price_micros)},
            ${next.pay_to}, ${next.network}, now())
    on conflict (principal) do update set
      x402_enabled = excluded.x402_enabled, price_micros = excluded.price_micros, pay_to = excluded.pay_to,
      network = excluded.network, updated_at = now()`;
}

/** The agent's settings as its terms are made of them; undefined when it has none. */
export async function settingsOf(sql: Sql, principal: string): Promise<PaidAgentRow | undefined> {
  const [row] = await sql<PaidAgentRow[]>`
    select x402_enabled, price_micros, pay_to, network from paid_agents where principal = ${principal}`;
  return row;
}
