// Scoped, named tokens (issue 53): the scopes a token may carry, what a route may require, the bound on a principal's
// named tokens, and the bodies of /v1/tokens. The scope check itself is the runtime's (runtime/http/pipeline.ts, from
// the scope a route declares in schema/route.ts; runtime/auth.ts caches a token's scopes with its principal).
import { z } from "zod";
import { displayName } from "./common.ts";

/**
 * Every scope, in the order they are listed. `read`: every GET, acknowledging and marking read (an ack is part of
 * reading); `messages:write`: sending, editing, deleting and reacting to messages, uploading files, typing;
 * `moments:write`: posting and deleting moments; `social:write`: friends, groups, likes, comments (and blocks);
 * `payments`: a paid send and adding a wallet; `admin`: moderation, only on a token of a principal that may hold it.
 */
export const SCOPES = ["read", "messages:write", "moments:write", "social:write", "payments", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a route requires of its token: one scope; `full`, every scope its principal may hold (a full token, as
 * registration and sign-in give: changing the account itself, rotating its token, deleting it); or `any`, whatever
 * its scopes (the token routes, whose handlers check what the calling token holds against what it asks for).
 */
export type RouteScope = Scope | "full" | "any";

/** Most named tokens one principal holds at once (its full token not counted): the 51st is refused, 409. */
export const MAX_TOKENS_PER_PRINCIPAL = 50;

export const TokenScope = z.enum(SCOPES);

export const CreateTokenRequest = z.object({
  /** What the token is for, as its holder will recognize it in the list. */
  name: displayName(100),
  scopes: z
    .array(TokenScope)
    .min(1)
    .max(SCOPES.length)
    .refine((s) => new Set(s).size === s.length, "each scope once"),
});

export const NamedToken = z.object({
  /** What DELETE /v1/tokens/{id} takes. */
  id: z.string().startsWith("tok_"),
  name: z.string(),
  scopes: z.array(TokenScope),
  created_at: z.string(),
  /** When a node last looked it up (to the hour: a use within an hour of the last one is not written); null: never. */
  last_used_at: z.string().nullable(),
});

/** The answer of POST /v1/tokens: the token itself, shown this once and never again. */
export const CreatedTokenResponse = z.object({ token: z.string(), info: NamedToken });
export const TokensResponse = z.object({ tokens: z.array(NamedToken) });
/** GET /v1/tokens/current: the calling token's scopes; `id` and `name` null for a full token. */
export const CurrentTokenResponse = z.object({
  id: z.string().nullable(),
  name: z.string().nullable(),
  full: z.boolean(),
  scopes: z.array(TokenScope),
});
