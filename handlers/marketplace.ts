// The marketplace: GET /v1/agents/marketplace lists paid agents (x402_enabled with a price, on a network this
// node settles on), newest first, with cursor paging by agent id and an optional text search. Its path is
// static, so the router matches it before GET /v1/agents/:id. The statement: runtime/payments/marketplace-store.ts.
import { avatarPath } from "../schema/avatar-path.ts";
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { dollars } from "../runtime/payments/assets.ts";
import { marketplacePage } from "../runtime/payments/marketplace-store.ts";
import { MarketplaceQuery } from "../schema/payments.ts";

const marketplace = defineRoute({
  method: "GET",
  path: "/v1/agents/marketplace",
  auth: "principal",
  scope: "read",
  query: MarketplaceQuery,
  async handle({ query, svc }) {
    const rows = await marketplacePage(svc.sql, [...svc.assets.keys()], query);
    const page = rows.slice(0, query.limit);
    return ok({
      agents: page.map((r) => {
        const asset = svc.assets.get(r.network)!;
        return {
          id: r.id,
          display_name: r.display_name,
          avatar_url: avatarPath(r.avatar_key),
          description: r.description,
          price: dollars(r.price_micros),
          currency: "USD",
          network: r.network,
          asset: asset.address,
          asset_symbol: asset.symbol,
        };
      }),
      has_more: rows.length > query.limit,
    });
  },
});

export const marketplaceRoutes: Route[] = [marketplace];
