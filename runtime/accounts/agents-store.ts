// Agents in Postgres: register one with its first token, read its profile (with the marketplace fields of paid
// agents), change it, and rotate its token. Only a token's SHA-256 is stored.
import type { Agent, AgentProfile, GroupAddPolicy } from "../../schema/agents.ts";
import type { Sql } from "../db/client.ts";
import { avatarPath } from "../../schema/avatar-path.ts";
import { avatarColumns, type AvatarChange } from "./avatars-store.ts";
import type { AssetTable } from "../payments/assets.ts";
import {
  hasSettings,
  marketplaceView,
  type PaidAgentRow,
  type SettingsChange,
  updateSettings,
} from "../payments/settings.ts";
import { hashToken } from "../tokens.ts";

interface AgentRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
  description: string;
  created_at: Date;
}

export const toAgent = (r: AgentRow): Agent => ({
  id: r.id,
  display_name: r.display_name,
  avatar_url: avatarPath(r.avatar_key),
  description: r.description,
  created_at: r.created_at.toISOString(),
});

/**
 * The profile: the agent and its marketplace fields (paid agents), and, for the agent itself (`own`), who may add
 * it to groups; null when there is no such agent.
 */
export async function loadAgent(sql: Sql, assets: AssetTable, id: string, own = false): Promise<AgentProfile | null> {
  const [row] = await sql<
    (AgentRow & Partial<PaidAgentRow> & { has_settings: boolean; accepts_group_adds_from: GroupAddPolicy })[]
  >`
    select p.id, p.display_name, p.avatar_key, p.description, p.created_at, p.accepts_group_adds_from,
           pa.principal is not null as has_settings, pa.x402_enabled, pa.price_micros, pa.pay_to, pa.network
    from principals p left join paid_agents pa on pa.principal = p.id
    where p.id = ${id} and p.kind = 'agent'`;
  if (!row) return null;
  const settings = row.has_settings ? (row as PaidAgentRow) : null;
  const profile: AgentProfile = { ...toAgent(row), ...marketplaceView(assets, settings) };
  if (own) profile.accepts_group_adds_from = row.accepts_group_adds_from;
  return profile;
}

/** A new agent and its first token, in one transaction. */
export async function registerAgent(
  sql: Sql,
  id: string,
  displayName: string,
  description: string,
  token: string,
): Promise<AgentRow> {
  return sql.begin(async (tx) => {
    const [r] = await tx<AgentRow[]>`
      insert into principals (id, kind, display_name, description)
      values (${id}, 'agent', ${displayName}, ${description})
      returning id, display_name, avatar_key, description, created_at`;
    await tx`insert into tokens (hash, principal) values (${hashToken(token)}, ${id})`;
    return r!;
  });
}

/** What PATCH /v1/agents/me may change: the profile's text, who may add it to groups, and the marketplace settings. */
interface AgentChange extends SettingsChange {
  display_name?: string;
  description?: string;
  accepts_group_adds_from?: GroupAddPolicy;
  avatar?: AvatarChange | undefined;
}

/** Changes the given fields of an agent (its marketplace settings too), in one transaction; false when there is no such agent. */
export async function updateAgent(sql: Sql, assets: AssetTable, id: string, change: AgentChange): Promise<boolean> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      update principals set
        display_name = coalesce(${change.display_name ?? null}::text, display_name),
        description = coalesce(${change.description ?? null}::text, description),
        accepts_group_adds_from = coalesce(${change.accepts_group_adds_from ?? null}::text, accepts_group_adds_from),
        ${avatarColumns(tx, change.avatar)}
        updated_at = now()
      where id = ${id} and kind = 'agent'
      returning id`;
    if (row && hasSettings(change)) await updateSettings(tx as unknown as Sql, assets, id, change);
    return row !== undefined;
  });
}

/** Replaces an agent's full token(s) with `token`, in one transaction; its named tokens (/v1/tokens) stay. */
export async function replaceToken(sql: Sql, principal: string, token: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from tokens where principal = ${principal} and id is null`;
    await tx`insert into tokens (hash, principal) values (${hashToken(token)}, ${principal})`;
  });
}
