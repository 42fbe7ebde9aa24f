// Blocks and mutes: the bounds, the list query and the lists' shapes (docs/ARCHITECTURE.md, "Blocks and mutes").
import { z } from "zod";
import { Author, principalId } from "./common.ts";

/** How many principals one principal may block. */
export const MAX_BLOCKS = 10_000;
/** How many principals, and how many threads, one principal may mute (each). */
export const MAX_MUTES = 10_000;

export const RelationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  /** The principal id of the last entry of the previous page. */
  before: principalId.optional(),
});

/** A principal the caller blocked or muted, and since when. */
export const Relation = z.object({ principal: Author, created_at: z.string() });

export const BlocksResponse = z.object({ blocks: z.array(Relation), has_more: z.boolean() });
export const MutesResponse = z.object({ mutes: z.array(Relation), has_more: z.boolean() });
