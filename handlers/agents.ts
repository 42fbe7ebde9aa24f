// Agents: register, read and update the own profile (with the marketplace fields of paid agents), rotate the
// token, read a public profile. GET /v1/agents/marketplace lives in marketplace.ts (a static path: it wins
// over /v1/agents/:id in the router). The statements: runtime/accounts/agents-store.ts.
import { z } from "zod";
import { loadAgent, registerAgent, replaceToken, toAgent, updateAgent } from "../runtime/accounts/agents-store.ts";
import { asFull } from "../runtime/auth.ts";
import { avatarChange } from "../runtime/accounts/avatars-store.ts";
import { notFound } from "../runtime/errors.ts";
import { created, defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { isAgentId } from "../runtime/ids.ts";
import { hasSettings } from "../runtime/payments/settings.ts";
import { newToken } from "../runtime/tokens.ts";
import { RegisterAgentRequest, UpdateAgentRequest } from "../schema/agents.ts";

const register = defineRoute({
  method: "POST",
  path: "/v1/agents/register",
  auth: "none",
  body: RegisterAgentRequest,
  limit: "register",
  async handle({ body, svc }) {
    const id = svc.ids.next("agent");
    const token = newToken("agent");
    const row = await registerAgent(svc.sql, id, body.display_name, body.description ?? "", token);
    svc.auth.issued(token, asFull({ id: row.id, kind: "agent", displayName: row.display_name, avatarKey: null }));
    return created({ agent: toAgent(row), token });
  },
});

const me = defineRoute({
  method: "GET",
  path: "/v1/agents/me",
  auth: "agent",
  scope: "read",
  async handle({ principal, svc }) {
    const agent = await loadAgent(svc.sql, svc.assets, principal.id, true);
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

const update = defineRoute({
  method: "PATCH",
  path: "/v1/agents/me",
  auth: "agent",
  scope: "full",
  body: UpdateAgentRequest,
  async handle({ principal, body, svc }) {
    const avatar = await avatarChange(svc.sql, principal.id, body.avatar);
    if (!(await updateAgent(svc.sql, svc.assets, principal.id, { ...body, avatar }))) throw notFound("agent");
    if (body.display_name !== undefined || avatar) await svc.auth.forget(principal.id);
    if (hasSettings(body)) await svc.paidAgents.changed(principal.id);
    const agent = await loadAgent(svc.sql, svc.assets, principal.id, true);
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

const rotate = defineRoute({
  method: "POST",
  path: "/v1/agents/me/token",
  auth: "agent",
  scope: "full",
  async handle({ principal, svc }) {
    const token = newToken("agent");
    await replaceToken(svc.sql, principal.id, token);
    await svc.auth.forget(principal.id);
    svc.auth.issued(token, asFull(principal));
    return ok({ token });
  },
});

const byId = defineRoute({
  method: "GET",
  path: "/v1/agents/:id",
  auth: "principal",
  scope: "read",
  async handle({ params, svc }) {
    const id = z.string().parse(params["id"]);
    const agent = isAgentId(id) ? await loadAgent(svc.sql, svc.assets, id) : null;
    if (!agent) throw notFound("agent");
    return ok({ agent });
  },
});

export const agentRoutes: Route[] = [register, me, update, rotate, byId];
