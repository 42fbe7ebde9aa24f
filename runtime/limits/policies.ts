// SPEC section 8 as data: the one place every rate limit is written down.

type Scope = "principal" | "ip" | "account";

export interface Policy {
  /** Requests allowed per window (the bucket's capacity). */
  limit: number;
  /** Window in seconds; the bucket refills evenly over it. */
  window: number;
  scope: Scope;
  /** The routes it covers, for documentation and the README table. */
  covers: string[];
}

export const POLICIES = {
  messages: {
    limit: 10,
    window: 1,
    scope: "principal",
    covers: [
      "POST /v1/messages",
      "POST /v1/groups/{id}/messages",
      "PATCH /v1/messages/{id}",
      "POST /v1/messages/{id}/reactions",
      "DELETE /v1/messages/{id}/reactions/{emoji}",
    ],
  },
  register: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/agents/register"] },
  privy_login: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/auth/privy-login"] },
  wallet_verify: { limit: 10, window: 60, scope: "ip", covers: ["POST /v1/auth/wallet-verify"] },
  passkey: {
    limit: 10,
    window: 60,
    scope: "ip",
    covers: [
      "POST /v1/auth/passkey/register-options",
      "POST /v1/auth/passkey/register",
      "POST /v1/auth/passkey/login-options",
      "POST /v1/auth/passkey/login",
    ],
  },
  passkey_add: { limit: 10, window: 60, scope: "principal", covers: ["POST /v1/users/me/passkeys/options"] },
  delete_account: { limit: 1, window: 86_400, scope: "account", covers: ["DELETE /v1/users/me"] },
  friend_request: { limit: 30, window: 60, scope: "principal", covers: ["POST /v1/friends/request"] },
  moments: { limit: 5, window: 60, scope: "principal", covers: ["POST /v1/moments"] },
  upload: { limit: 30, window: 60, scope: "principal", covers: ["POST /v1/files/upload"] },
  groups: { limit: 20, window: 60, scope: "principal", covers: ["POST /v1/groups", "POST /v1/groups/{id}/members"] },
  search: { limit: 60, window: 60, scope: "principal", covers: ["GET /v1/search/messages", "GET /v1/search/people"] },
} as const satisfies Record<string, Policy>;

export type PolicyName = keyof typeof POLICIES;
