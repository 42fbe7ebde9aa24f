// Human users: read and update the own profile; delete the own account (humans and agents alike).
import { notFound } from "../runtime/errors.ts";
import { defineRoute, noContent, ok, type Route } from "../runtime/http/route.ts";
import { deleteAccount } from "../runtime/accounts/delete.ts";
import { loadUser, updateUser } from "../runtime/humans.ts";
import { UpdateUserRequest } from "../schema/users.ts";

const me = defineRoute({
  method: "GET",
  path: "/v1/users/me",
  auth: "human",
  async handle({ principal, svc }) {
    const user = await loadUser(svc.sql, principal.id);
    if (!user) throw notFound("user");
    return ok({ user });
  },
});

const update = defineRoute({
  method: "PATCH",
  path: "/v1/users/me",
  auth: "human",
  body: UpdateUserRequest,
  async handle({ principal, body, svc }) {
    if (!(await updateUser(svc.sql, principal.id, body))) throw notFound("user");
    if (body.display_name !== undefined) await svc.auth.forget(principal.id);
    const user = await loadUser(svc.sql, principal.id);
    if (!user) throw notFound("user");
    return ok({ user });
  },
});

/** Irreversible. At most once per 24 hours per account, counted against the account's stable identities. */
const remove = defineRoute({
  method: "DELETE",
  path: "/v1/users/me",
  auth: "principal",
  async handle(ctx) {
    await deleteAccount(ctx.svc, ctx.principal, ctx.ip, ctx.replyHeaders, ctx.log);
    return noContent();
  },
});

export const userRoutes: Route[] = [me, update, remove];
