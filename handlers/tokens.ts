// Scoped, named tokens (issue 53): mint one with some scopes (answered once), list them, revoke one, and see what the
// calling token may do. A token never mints nor revokes one wider than itself. A principal's full token (what
// registration or sign-in gives) is not listed here: rotation (POST /v1/agents/me/token) replaces it. Revoking tells
// every node to drop what it cached for the principal (runtime/auth.ts), and sockets opened with the revoked token
// are closed 4401 (runtime/ws/server.ts). The statements: runtime/tokens-store.ts.
import { fullScopes, grants } from "../runtime/auth.ts";
import { ApiError, insufficientScope, notFound } from "../runtime/errors.ts";
import { isModerator } from "../runtime/moderation/moderation.ts";
import { created, defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { hashToken, newToken } from "../runtime/tokens.ts";
import {
  deleteNamedToken,
  namedToken,
  namedTokens,
  type NamedTokenRow,
  saveNamedToken,
} from "../runtime/tokens-store.ts";
import { CreateTokenRequest, MAX_TOKENS_PER_PRINCIPAL, type Scope, SCOPES } from "../schema/tokens.ts";

/** Scopes in their listed order (schema/tokens.ts), whatever order they were given in. */
const ordered = (scopes: readonly string[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));

const toNamedToken = (r: NamedTokenRow) => ({
  id: r.id,
  name: r.name,
  scopes: ordered(r.scopes),
  created_at: r.created_at.toISOString(),
  last_used_at: r.last_used_at?.toISOString() ?? null,
});

const create = defineRoute({
  method: "POST",
  path: "/v1/tokens",
  auth: "principal",
  // what it may grant is checked below: only scopes the calling token holds
  scope: "any",
  body: CreateTokenRequest,
  limit: "tokens",
  async handle({ body, principal, svc }) {
    const scopes = ordered(body.scopes);
    for (const s of scopes) if (!grants(principal, s)) throw insufficientScope(s);
    // `admin` only for a moderator (asked now: the role is granted on the server, never by the API)
    if (scopes.includes("admin") && !(await isModerator(svc, principal))) throw insufficientScope("admin");
    const token = newToken(principal.kind);
    const row = await saveNamedToken(svc.sql, {
      hash: hashToken(token),
      id: svc.ids.next("token"),
      principal: principal.id,
      name: body.name,
      scopes,
    });
    if (!row) throw new ApiError("conflict", `a principal holds at most ${MAX_TOKENS_PER_PRINCIPAL} named tokens`);
    return created({ token, info: toNamedToken(row) });
  },
});

const list = defineRoute({
  method: "GET",
  path: "/v1/tokens",
  auth: "principal",
  scope: "read",
  async handle({ principal, svc }) {
    return ok({ tokens: (await namedTokens(svc.sql, principal.id)).map(toNamedToken) });
  },
});

const current = defineRoute({
  method: "GET",
  path: "/v1/tokens/current",
  auth: "principal",
  // any token may learn what it may do (an MCP server asks, to offer only the tools it allows)
  scope: "any",
  async handle({ principal, svc }) {
    const row = principal.tokenId === null ? undefined : await namedToken(svc.sql, principal.id, principal.tokenId);
    return ok({
      id: principal.tokenId,
      name: row?.name ?? null,
      full: grants(principal, "full"),
      scopes: ordered([...principal.scopes]),
    });
  },
});

const revoke = defineRoute({
  method: "DELETE",
  path: "/v1/tokens/:id",
  auth: "principal",
  // any token may revoke itself or a narrower one of its principal's; never a wider one (checked below)
  scope: "any",
  async handle({ params, principal, svc }) {
    const id = params["id"] ?? "";
    const row = parseId("token", id) === null ? undefined : await namedToken(svc.sql, principal.id, id);
    if (!row) throw notFound("token");
    // a scope its principal may no longer hold (admin) does not keep a token from being revoked
    const held = fullScopes(principal);
    for (const s of ordered(row.scopes)) if (held.has(s) && !grants(principal, s)) throw insufficientScope(s);
    if (!(await deleteNamedToken(svc.sql, principal.id, id))) throw notFound("token");
    // every node drops the principal's cached tokens and re-checks its open sockets' (the revoked one's close 4401)
    await svc.auth.forget(principal.id);
    return noContent();
  },
});

export const tokenRoutes: Route[] = [create, list, current, revoke];
