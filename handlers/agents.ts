// Agents: register, read and update the own profile (with the marketplace fields of paid agents), rotate the
// token, read a public profile. GET /v1/agents/marketplace lives in marketplace.ts (a static path: it wins
// over /v1/agents/:id in the router).
import { z } from "zod";
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { isAgentId } from "../runtime/ids.ts";
import { hasSettings, marketplaceView, type PaidAgentRow, updateSettings } from "../runtime/payments/settings.ts";
import type { Services } from "../runtime/services.ts";
import { hashToken, newToken } from "../runtime/tokens.ts";
import { type Agent, type AgentProfile, RegisterAgentRequest, UpdateAgentRequest } from "../schema/agents.ts";

interface AgentRow {
  id: string;
  display_name: string;
  description: string;
  created_at: Date;
}

const toAgent = (r: AgentRow): Agent => ({
  id: r.id,
  display_name: r.display_name,
  description: r.description,
  created_at: r.created_at.toISOString(),
});

/** The profile: the agent and its marketplace fields (paid agents). */
async function loadAgent(svc: Services, id: string): Promise<AgentProfile | null> {
  const [row] = await svc.sql<(AgentRow & Partial<PaidAgentRow> & { has_settings: boolean })[]>`
    select p.id, p.display_name, p.description, p.created_at,
           pa.principal is not null as has_settings, pa.x402_enabled, pa.price_micros, pa.pay_to, pa.network
    from principals p left join paid_agents pa on pa.principal = p.id
    where p.id = ${id} and p.kind = 'agent'`;
  if (!row) return null;
  const settings = row.has_settings ? (row as PaidAgentRow) : null;
  return { ...toAgent(row), ...marketplaceView(svc.assets, settings) };
}

const register = defineRoute({
  method: "POST",
  path: "/v1/agents/register",
  auth: "none",
  body: RegisterAgentRequest,
  limit: "register",
  async handle({ body, svc }) {
    const id = svc.ids.next("agent");
    const token = newToken("agent");
    const row = await svc.sql.begin(async (tx) => {
      const [r] = await tx<AgentRow[]>`
        insert into principals (id, kind, display_name, description)
        values (${id}, 'agent', ${body.display_name}, ${body.description ?? ""})
        returning id, display_name, description, created_at`;
      await tx`insert into tokens (hash, principal) values (${hashToken(token)}, ${id})`;
      return r!;
    });
    svc.auth.issued(token, { id: row.id, kind: "agent", displayName: row.display_name });
    return created({ agent: toAgent(row), token });
  },
});

const me = defineRoute({
  method: "GET",
  path: "/v1/agents/me",
  auth: "agent",
  async handle({ principal, svc }) {
    const agent = await loadAgent(svc, principal.id);
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

const update = defineRoute({
  method: "PATCH",
  path: "/v1/agents/me",
  auth: "agent",
  body: UpdateAgentRequest,
  async handle({ principal, body, svc }) {
    const found = await svc.sql.begin(async (tx) => {
      const [row] = await tx<AgentRow[]>`
        update principals set
          display_name = coalesce(${body.display_name ?? null}::text, display_name),
          description = coalesce(${body.description ?? null}::text, description),
          updated_at = now()
        where id = ${principal.id} and kind = 'agent'
        returning id, display_name, description, created_at`;
      if (row && hasSettings(body)) await updateSettings(tx as unknown as typeof svc.sql, svc.assets, principal.id, body);
      return row !== undefined;
    });
    if (!found) throw notFound("agent");
    if (body.display_name !== undefined) await svc.auth.forget(principal.id);
    if (hasSettings(body)) await svc.paidAgents.changed(principal.id);
    const agent = await loadAgent(svc, principal.id);
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

const rotate = defineRoute({
  method: "POST",
  path: "/v1/agents/me/token",
  auth: "agent",
  async handle({ principal, svc }) {
    const token = newToken("agent");
    await svc.sql.begin(async (tx) => {
      await tx`delete from tokens where principal = ${principal.id}`;
      await tx`insert into tokens (hash, principal) values (${hashToken(token)}, ${principal.id})`;
    });
    await svc.auth.forget(principal.id);
    svc.auth.issued(token, principal);
    return ok({ token });
  },
});

const byId = defineRoute({
  method: "GET",
  path: "/v1/agents/:id",
  auth: "principal",
  async handle({ params, svc }) {
    const id = z.string().parse(params["id"]);
    const agent = isAgentId(id) ? await loadAgent(svc, id) : null;
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

export const agentRoutes: Route[] = [register, me, update, rotate, byId];
