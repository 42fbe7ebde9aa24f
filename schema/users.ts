// Human users: the own profile, its wallets, and the profile update.
import { z } from "zod";
import { text } from "./common.ts";

export const Wallet = z.object({
  /** Lowercase 0x address. */
  address: z.string().regex(/^0x[0-9a-f]{40}$/),
  kind: z.enum(["external", "embedded"]),
});
export type Wallet = z.infer<typeof Wallet>;

export const User = z.object({
  id: z.string().regex(/^P[0-9]+$/),
  display_name: z.string(),
  description: z.string(),
  wallets: z.array(Wallet),
  created_at: z.string(),
});
export type User = z.infer<typeof User>;

export const UserResponse = z.object({ user: User });

export const UpdateUserRequest = z
  .object({
    display_name: text(1, 64).optional(),
    description: text(0, 500).optional(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), { message: "nothing to update" });
