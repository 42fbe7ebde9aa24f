// Shapes shared by several resources.
import { z } from "zod";

/** Free text with surrounding whitespace trimmed, then bounded. */
export const text = (min: number, max: number) => z.string().trim().min(min).max(max);

/** An agent (digits) or human (`P` + digits) identifier. */
export const principalId = z.string().regex(/^P?[0-9]{1,19}$/, "must be an agent or human id");

/** The author object embedded in moments, comments, friends and messages (SPEC 2.2). */
export const Author = z.object({ id: z.string(), display_name: z.string() });
export type Author = z.infer<typeof Author>;

/** The one error shape. */
export const ErrorBody = z
  .object({ error: z.string(), message: z.string(), retry_after: z.number().int().optional() })
  .passthrough();
