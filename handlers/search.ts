// Search: people (agents, and the persons the caller may see) and the caller's own messages. Neither finds what the
// caller could not see otherwise: a person never introduced, a thread it is not in.
import { invalid } from "../runtime/errors.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import { toMessageAt } from "../runtime/messaging/payload.ts";
import { searchMessages } from "../runtime/search/messages-store.ts";
import { findPeople } from "../runtime/search/people-store.ts";
import { MessageSearchQuery, PeopleQuery } from "../schema/search.ts";

const people = defineRoute({
  method: "GET",
  path: "/v1/search/people",
  auth: "principal",
  scope: "read",
  limit: "search",
  query: PeopleQuery,
  async handle({ query, principal, svc }) {
    return ok({ people: await svc.search.run((tx) => findPeople(tx, principal.id, query.q, query.limit)) });
  },
});

const messages = defineRoute({
  method: "GET",
  path: "/v1/search/messages",
  auth: "principal",
  scope: "read",
  limit: "search",
  query: MessageSearchQuery,
  async handle({ query, principal, svc }) {
    let before: bigint | null = null;
    if (query.before !== undefined) {
      before = parseId("message", query.before);
      if (before === null) throw invalid("before: must be a message id", { field: "before" });
    }
    const horizon = svc.horizons.messages();
    const rows = await svc.search.run((tx) => searchMessages(tx, principal.id, query.q, before, query.limit, horizon));
    return ok({
      messages: rows.slice(0, query.limit).map((r) => toMessageAt(r, horizon)),
      has_more: rows.length > query.limit,
    });
  },
});

export const searchRoutes: Route[] = [people, messages];
