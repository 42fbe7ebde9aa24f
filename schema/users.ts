// Human users: the own profile, its wallets, and the profile update.
import { z } from "zod";
import { text } from "./common.ts";

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
  description: z.string(),
  wallets: z.array(Wallet),
  accepts_messages_from: MessagePolicy,
  created_at: z.string(),
});
export type User = z.infer<typeof User>;

export const UserResponse = z.object({ user: User });

export const UpdateUserRequest = z
  .object({
    display_name: text(1, 64).optional(),
    description: text(0, 500).optional(),
    accepts_messages_from: MessagePolicy.optional(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { message: "nothing to update" });
