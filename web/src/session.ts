// The signed-in session, kept in localStorage: which Flock (the page's own origin unless the user chose another),
// the bearer token, who it belongs to, and when a human token expires.
import { Flock, FlockError } from "@flock/client";
import { net } from "./net.ts";
import { heldAccount } from "./wallet.ts";

export interface Session {
  api: string;
  token: string;
  kind: "human" | "agent";
  me: { id: string; display_name: string };
  /** Wallet address of a human signed in with an injected wallet (pays paid agents). */
  address?: string;
  expires_at?: string;
}

/** What the app learns about the signed-in principal after sign-in: a new name, a wallet linked. */
export type SessionChange = Partial<Pick<Session, "me" | "address">>;

const KEY = "flock.session";
const API_KEY = "flock.api";

export function defaultApi(): string {
  return localStorage.getItem(API_KEY) ?? location.origin;
}

export function rememberApi(api: string): void {
  if (api === location.origin) localStorage.removeItem(API_KEY);
  else localStorage.setItem(API_KEY, api);
}

export function loadSession(): Session | null {
  try {
    const s = JSON.parse(localStorage.getItem(KEY) ?? "null") as Session | null;
    if (!s || typeof s.token !== "string") return null;
    if (s.expires_at && Date.parse(s.expires_at) <= Date.now()) return null;
    return s;
  } catch {
    return null;
  }
}

export function saveSession(s: Session): void {
  localStorage.setItem(KEY, JSON.stringify(s));
}

/** The session with a change applied, or the same object when the change changes nothing. */
export function changed(s: Session, c: SessionChange): Session {
  const n = { ...s, ...c };
  return JSON.stringify(n) === JSON.stringify(s) ? s : n;
}

/**
 * Who the session's principal is now, as the API has it (the name may have changed on another device), and for a
 * person without a wallet in the session, a wallet of theirs that the injected wallet holds (asked without a prompt).
 */
export async function whoAmI(
  client: Flock,
  s: Session,
): Promise<{ me: { id: string; display_name: string; avatar_url: string | null }; change: SessionChange }> {
  const p = s.kind === "human" ? await client.user() : await client.me();
  const me = { id: p.id, display_name: p.display_name, avatar_url: p.avatar_url ?? null };
  const change: SessionChange = { me: { id: p.id, display_name: p.display_name } };
  if ("wallets" in p && !s.address && p.wallets.length > 0) {
    const address = await heldAccount(p.wallets.map((w) => w.address));
    if (address) change.address = address;
  }
  return { me, change };
}

/** Signs out here: the session and the names and pictures remembered for it (names.tsx) go. */
export function clearSession(): void {
  localStorage.removeItem(KEY);
  for (const k of Object.keys(localStorage)) if (k.startsWith("flock.people.")) localStorage.removeItem(k);
}

/**
 * A client for the session: no automatic retries, so a 429 reaches the page with its retry time; its requests tell
 * net.ts whether Flock answers.
 */
export function clientFor(api: string, token?: string): Flock {
  net.setBase(api);
  return new Flock({ baseUrl: api, token, retry: { maxAttempts: 1 }, fetch: net.fetch });
}

/** What a banner says when Flock did not answer at all. */
export const UNREACHABLE =
  "Flock can't be reached right now (Failed to fetch). This clears once the connection is back.";

/** A failure as a sentence for the page; a 429 says when to try again; a connection failure clears on its own. */
export function describe(err: unknown): string {
  return net.remember(err, sentence(err));
}

function sentence(err: unknown): string {
  if (err instanceof FlockError) {
    if (err.status === 0 && err.code === "network_error") return UNREACHABLE;
    if (err.status === 429) return `Too many requests: try again in ${err.retryAfter ?? 1} s.`;
    return err.message || err.code;
  }
  return err instanceof Error ? err.message : String(err);
}

/** True when the token is no longer accepted (expired or revoked). */
export const isUnauthorized = (err: unknown): boolean => err instanceof FlockError && err.status === 401;
