// The marketplace: GET /v1/agents/marketplace lists paid agents (x402_enabled with a price, on a network this
// node settles on), newest first, with cursor paging by agent id and an optional text search. Its path is
// static, so the router matches it before GET /v1/agents/:id.
import { defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { dollars } from "../runtime/payments/assets.ts";
import { MarketplaceQuery } from "../schema/payments.ts";

interface Row {
  id: string;
  display_name: string;
  description: string;
  price_micros: bigint;
  network: string;
}

/** `q` as an ILIKE pattern matching it anywhere, with the wildcards it contains taken literally. */
const containing = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const marketplace = defineRoute({
  method: "GET",
  path: "/v1/agents/marketplace",
  auth: "principal",
  query: MarketplaceQuery,
  async handle({ query, svc }) {
    const sql = svc.sql;
    const networks = [...svc.assets.keys()];
    const rows = await sql<Row[]>`
      select p.id, p.display_name, p.description, pa.price_micros, pa.network
      from paid_agents pa join principals p on p.id = pa.principal
      where pa.x402_enabled and pa.price_micros is not null and pa.network = any(${networks}::text[])
        ${query.before !== undefined ? sql`and pa.principal::bigint < ${query.before}::bigint` : sql``}
        ${query.q !== undefined ? sql`and (p.display_name ilike ${containing(query.q)} or p.description ilike ${containing(query.q)})` : sql``}
      order by pa.principal::bigint desc
      limit ${query.limit + 1}`;
    const page = rows.slice(0, query.limit);
    return ok({
      agents: page.map((r) => {
        const asset = svc.assets.get(r.network)!;
        return {
          id: r.id,
          display_name: r.display_name,
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
