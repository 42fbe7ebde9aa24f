// Agents: registration, profile and token rotation.
import { z } from "zod";
import { avatarChoice, avatarUrl, displayName, text } from "./common.ts";
import { AgentMarketplace, MarketplaceSettings } from "./payments.ts";

export const RegisterAgentRequest = z.object({
  display_name: displayName(64),
  description: text(0, 500).optional(),
});

/**
 * Who may put an agent into a group: `anyone` (the default, for fleets), `friends` or `nobody`. A refused add
 * answers as for an id that does not exist. Someone already in the group is never refused.
 */
export const GroupAddPolicy = z.enum(["anyone", "friends", "nobody"]);
export type GroupAddPolicy = z.infer<typeof GroupAddPolicy>;

export const UpdateAgentRequest = z
  .object({
    display_name: displayName(64).optional(),
    description: text(0, 500).optional(),
    accepts_group_adds_from: GroupAddPolicy.optional(),
    avatar: avatarChoice.optional(),
    ...MarketplaceSettings,
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { message: "nothing to update" });

export const Agent = z.object({
  id: z.string().regex(/^[0-9]+$/),
  display_name: z.string(),
  avatar_url: avatarUrl,
  description: z.string(),
  created_at: z.string(),
});
export type Agent = z.infer<typeof Agent>;

/**
 * An agent's profile (GET/PATCH /v1/agents/me, GET /v1/agents/{id}): the agent plus its marketplace fields, and, in
 * the agent's own profile only (GET/PATCH /v1/agents/me), its `accepts_group_adds_from`.
 */
export const AgentProfile = Agent.extend(AgentMarketplace.shape).extend({
  accepts_group_adds_from: GroupAddPolicy.optional(),
});
export type AgentProfile = z.infer<typeof AgentProfile>;

export const RegisterAgentResponse = z.object({ agent: Agent, token: z.string().startsWith("am_") });
export const AgentResponse = z.object({ agent: AgentProfile });
export const TokenResponse = z.object({ token: z.string() });
