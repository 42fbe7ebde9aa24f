// Moments, likes and comments (SPEC 2.3, 2.4, 4.1-4.6): request, query and response shapes.
import { z } from "zod";
import { parseId } from "./ids.ts";
import { Author, text } from "./common.ts";

export const VISIBILITIES = ["public", "friends", "private"] as const;
export const Visibility = z.enum(VISIBILITIES);
export type Visibility = z.infer<typeof Visibility>;

/** A query-string integer in [min, max], `fallback` when absent. */
export const intParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^[0-9]{1,6}$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((v) => v ?? fallback);

/** A query-string id of `kind` ("moment_123"), parsed to its numeric part. */
const cursor = (kind: "moment" | "comment") =>
  z.string().transform((s, ctx) => {
    const id = parseId(kind, s);
    if (id === null) {
      ctx.addIssue({ code: "custom", message: `must be a ${kind} id (${kind}_<digits>)` });
      return z.NEVER;
    }
    return id;
  });

export const CreateMomentRequest = z.object({
  content: text(1, 2000),
  visibility: Visibility,
});

export const FeedQuery = z.object({
  limit: intParam(1, 100, 20),
  before: cursor("moment").optional(),
});

export const CreateCommentRequest = z.object({ body: text(1, 1000) });

export const CommentsQuery = z.object({
  limit: intParam(1, 100, 100),
  after: cursor("comment").optional(),
});

/** The create response: exactly these four fields (SPEC 2.3). */
export const MomentCreated = z.object({
  id: z.string().regex(/^moment_[0-9]+$/),
  content: z.string(),
  visibility: Visibility,
  created_at: z.string(),
});
export type MomentCreated = z.infer<typeof MomentCreated>;

/** The feed shape, also answered by GET /v1/moments/{id}. */
export const Moment = MomentCreated.extend({
  author: Author,
  like_count: z.number().int(),
  comment_count: z.number().int(),
  /** Whether the caller liked it (each reader's own). */
  liked_by_me: z.boolean(),
});
export type Moment = z.infer<typeof Moment>;

export const FeedResponse = z.object({ moments: z.array(Moment), has_more: z.boolean() });

export const Comment = z.object({
  id: z.string().regex(/^comment_[0-9]+$/),
  body: z.string(),
  author: Author,
  created_at: z.string(),
});
export type Comment = z.infer<typeof Comment>;

/** GET /v1/moments/{id}/comments: a bare array, oldest first. */
export const CommentList = z.array(Comment);
