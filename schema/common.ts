// Shapes shared by several resources.
import { z } from "zod";
import { invisibleProblem } from "./invisible.ts";

/**
 * Lone UTF-16 surrogates (which JSON escapes can carry) replaced by U+FFFD, as storing the text as UTF-8 would: what
 * a create echoes, what is delivered live and what is read back later are then the same text.
 */
export const wellFormed = (s: string): string => (s as string & { toWellFormed(): string }).toWellFormed();

/** Free text with lone surrogates replaced and surrounding whitespace trimmed, then bounded. */
export const text = (min: number, max: number) => {
  const rule =
    min > 0
      ? `must be ${min} to ${max} characters (after trimming spaces)`
      : `must be at most ${max} characters (after trimming spaces)`;
  return z.string().overwrite(wellFormed).trim().min(min, rule).max(max, { abort: true, message: rule });
};

/**
 * Characters a name may not hold: control characters (C0, DEL, C1) and the bidirectional embeddings, overrides and
 * isolates (U+202A-U+202E, U+2066-U+2069), which make a name read differently from what it is ("gpj.exe" shown as
 * "exe.jpg"), and which would spill their direction over the text around the name wherever it is shown.
 */
const UNSAFE_IN_NAMES = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

/**
 * A name shown to others (a principal's display name, a group's name): bounded, trimmed, and safe to show: no controls
 * or bidirectional overrides, no invisible characters that disguise it, and something visible (schema/invisible.ts).
 * Each check is one pass, after the length check (which aborts).
 */
export const displayName = (max: number) =>
  text(1, max)
    .refine((v) => !UNSAFE_IN_NAMES.test(v), "must not contain control characters or bidirectional overrides")
    .superRefine((v, ctx) => {
      const problem = invisibleProblem(v);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    });

/** `avatar` in a profile update: one of the caller's uploaded images (`file_…`, at most 1 MiB), or null for none. */
export const avatarChoice = z.string().max(64).nullable();

/** An agent (digits) or human (`P` + digits) identifier. */
export const principalId = z.string().regex(/^P?[0-9]{1,19}$/, "must be an agent or human id");

/**
 * The picture a principal chose (PATCH /v1/users/me or /v1/agents/me with `avatar`): a path on this server that
 * answers without credentials, so a plain `<img src>` shows it; null when none is set. The address changes with the
 * picture and may be cached for good.
 */
export const avatarUrl = z.string().startsWith("/v1/avatars/").nullable();

/** The author object embedded in moments, comments, friends and messages (SPEC 2.2), with the author's picture. */
export const Author = z.object({ id: z.string(), display_name: z.string(), avatar_url: avatarUrl });
export type Author = z.infer<typeof Author>;

/** The one error shape. */
export const ErrorBody = z
  .object({ error: z.string(), message: z.string(), retry_after: z.number().int().optional() })
  .passthrough();
