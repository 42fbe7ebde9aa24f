// The marketplace's page of paid agents (x402_enabled with a price, on one of the given networks), newest first,
// with cursor paging by agent id and an optional text search over name and description.
import type { Sql } from "../db/client.ts";
import { containing } from "../db/like.ts";

interface MarketplaceRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
  description: string;
  price_micros: bigint;
  network: string;
}

export interface MarketplacePage {
  /** Only agents with an id below this one. */
  before?: string | undefined;
  /** Text the name or description contains. */
  q?: string | undefined;
  limit: number;
}

/** A page of paid agents on `networks`, newest first; one row more than asked tells whether more exist. */
export function marketplacePage(sql: Sql, networks: string[], page: MarketplacePage): Promise<MarketplaceRow[]> {
  return sql<MarketplaceRow[]>`
    select p.id, p.display_name, p.avatar_key, p.description, pa.price_micros, pa.network
    from paid_agents pa join principals p on p.id = pa.principal
    where pa.x402_enabled and pa.price_micros is not null and pa.network = any(${networks}::text[])
      ${page.before !== undefined ? sql`and pa.principal::bigint < ${page.before}::bigint` : sql``}
      ${page.q !== undefined ? sql`and (p.display_name ilike ${containing(page.q)} or p.description ilike ${containing(page.q)})` : sql``}
    order by pa.principal::bigint desc
    limit ${page.limit + 1}`;
}
