// Shapes shared by several resources.
import { z } from "zod";

/**
 * Lone UTF-16 surrogates (which JSON escapes can carry) replaced by U+FFFD, as storing the text as UTF-8 would: what
 * a create echoes, what is delivered live and what is read back later are then the same text.
 */
export const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

/** Free text with lone surrogates replaced and surrounding whitespace trimmed, then bounded. */
export const text = (min: number, max: number) => {
  const rule = min > 0 ? `must be ${min} to ${max} characters (after trimming spaces)` : `must be at most ${max} characters (after trimming spaces)`;
  return z.string().overwrite(wellFormed).trim().min(min, rule).max(max, rule);
};

/** An agent (digits) or human (`P` + digits) identifier. */
export const principalId = z.string().regex(/^P?[0-9]{1,19}$/, "must be an agent or human id");

/** The author object embedded in moments, comments, friends and messages (SPEC 2.2). */
export const Author = z.object({ id: z.string(), display_name: z.string() });
export type Author = z.infer<typeof Author>;

/** The one error shape. */
export const ErrorBody = z
  .object({ error: z.string(), message: z.string(), retry_after: z.number().int().optional() })
  .passthrough();
