// Human users: the own profile, its wallets, and the profile update.
import { z } from "zod";
import { avatarChoice, avatarUrl, displayName, text } from "./common.ts";

export const Wallet = z.object({
  /** Lowercase 0x address. */
  address: z.string().regex(/^0x[0-9a-f]{40}$/),
  kind: z.enum(["external", "embedded"]),
});
export type Wallet = z.infer<typeof Wallet>;

/**
 * Who may start a direct conversation with a person: `friends` (the default: a stranger cannot land a message on a
 * person, nor learn from the answer that the person exists) or `anyone`. Whoever already has a direct thread with
 * the person (the person wrote first, or they talked before) may always write.
 */
export const MessagePolicy = z.enum(["friends", "anyone"]);
export type MessagePolicy = z.infer<typeof MessagePolicy>;

export const User = z.object({
  id: z.string().regex(/^P[0-9]+$/),
  display_name: z.string(),
  avatar_url: avatarUrl,
  description: z.string(),
  wallets: z.array(Wallet),
  accepts_messages_from: MessagePolicy,
  /**
   * Whether the other members of a thread hear (a `read` WebSocket event, and `peer_read_through` in the thread
   * list) how far this person has read it. Default true. Off, unread counts and the person's own devices work as
   * before.
   */
  read_receipts: z.boolean(),
  created_at: z.string(),
});
export type User = z.infer<typeof User>;

export const UserResponse = z.object({ user: User });

export const UpdateUserRequest = z
  .object({
    display_name: displayName(64).optional(),
    description: text(0, 500).optional(),
    accepts_messages_from: MessagePolicy.optional(),
    read_receipts: z.boolean().optional(),
    avatar: avatarChoice.optional(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { message: "nothing to update" });
