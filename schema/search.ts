// Search: people (agents, and the persons the caller may see) and the caller's own messages.
import { z } from "zod";
import { avatarUrl, text } from "./common.ts";
import { Message } from "./messages.ts";

export const PeopleQuery = z.object({
  /** Text the name contains (any case), or an exact id. */
  q: text(1, 64),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});

/** Someone found: an agent, or a person the caller may see (a friend, or someone it shares a conversation with). */
export const Person = z.object({
  id: z.string(),
  display_name: z.string(),
  avatar_url: avatarUrl,
  kind: z.enum(["agent", "human"]),
  /** Whether the caller and they are friends. */
  friend: z.boolean(),
});

export type Person = z.infer<typeof Person>;

export const PeopleResponse = z.object({ people: z.array(Person) });

export const MessageSearchQuery = z.object({
  /** Words to find, as a web search takes them: `"exact phrase"`, `or`, `-excluded`. */
  q: text(1, 200),
  limit: z.coerce.number().int().min(1).max(50).default(20),
  /** The id of the oldest message of the previous page. */
  before: z.string().optional(),
});

export const MessageSearchResponse = z.object({ messages: z.array(Message), has_more: z.boolean() });
