// Bearer authentication. Token hash -> principal and the token's scopes, cached per node for a short while; a
// rotation, revocation, deletion, profile change or suspension is broadcast so every node drops its cached entries at
// once.
import type { Author } from "../schema/common.ts";
import { type RouteScope, type Scope, SCOPES } from "../schema/tokens.ts";
import { avatarPath } from "../schema/avatar-path.ts";
import type { Sql } from "./db/client.ts";
import type { PubSub } from "./engines/pubsub.ts";
import { CHANNELS, listen, publish } from "./engines/node-channels.ts";
import { suspendedError, unauthorized } from "./errors.ts";
import { hashToken, looksLikeToken } from "./tokens.ts";
import { principalOfToken, touchToken } from "./tokens-store.ts";

export interface Principal {
  id: string;
  kind: "agent" | "human";
  displayName: string;
  /** The key of the principal's picture (runtime/accounts/avatars-store.ts), null when none is set. */
  avatarKey: string | null;
  /** What the token used may do (schema/tokens.ts): every scope the principal may hold for a full token. */
  scopes: ReadonlySet<Scope>;
  /** The named token used (`tok_…`); null for a full token (registration's, sign-in's). */
  tokenId: string | null;
}

/** The scopes a full token carries: every one but `admin`, which it grants on the moderators' routes (grants). */
const FULL: ReadonlySet<Scope> = new Set(SCOPES.filter((s) => s !== "admin"));

/** Every scope `principal` may hold on any route: what its full token carries. */
export function fullScopes(_principal: Pick<Principal, "id" | "kind">): ReadonlySet<Scope> {
  return FULL;
}

/** The same principal as its full token shows it (a token registration or rotation has just issued). */
export const asFull = (p: Omit<Principal, "scopes" | "tokenId">): Principal => ({
  id: p.id,
  kind: p.kind,
  displayName: p.displayName,
  avatarKey: p.avatarKey,
  scopes: fullScopes(p),
  tokenId: null,
});

/**
 * Whether the principal's token grants `need`: a scope it carries; `full`, every scope its principal may hold; `any`
 * always.
 */
export function grants(p: Principal, need: RouteScope): boolean {
  if (need === "any") return true;
  // `admin` is needed only by the moderators' routes, which also admit moderators only (runtime/moderation/), asked
  // live: a full token grants it, and a named token minted with it (by a moderator), while its principal is one
  if (need === "admin") return p.tokenId === null || p.scopes.has("admin");
  if (need !== "full") return p.scopes.has(need);
  for (const s of fullScopes(p)) if (!p.scopes.has(s)) return false;
  return true;
}

/** A named token is written as used when it was last written this long before (or never). */
const TOUCH_AFTER_MS = 3_600_000;

/** A principal as the author object of what it writes. */
export const authorOf = (p: Principal): Author => ({
  id: p.id,
  display_name: p.displayName,
  avatar_url: avatarPath(p.avatarKey),
});

interface Cached {
  principal: Principal;
  expiresAt: number; // token expiry (ms), Infinity when none
  cachedUntil: number;
  /** Suspended by a moderator (runtime/moderation/): the principal is known, and refused 403 `suspended`. */
  suspended: boolean;
}

const CACHE_MS = 30_000;
const CACHE_MAX = 50_000;

export class Authenticator {
  // Keyed by the token itself: the cache never leaves this process, which sees the token on every request
  // anyway, and a hit then costs no SHA-256 (only a miss hashes, to look the token up in Postgres).
  private readonly cache = new Map<string, Cached>(); // token -> entry
  private readonly byPrincipal = new Map<string, Set<string>>();
  private readonly forgetListeners: ((principalId: string) => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly pubsub: PubSub,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    await listen(this.pubsub, CHANNELS.authForget, undefined, (id) => {
      this.drop(id);
      for (const l of this.forgetListeners) l(id);
    });
  }

  /** Be told (on every node) when a principal's tokens or profile changed: rotation, deletion, rename. */
  onForget(listener: (principalId: string) => void): void {
    this.forgetListeners.push(listener);
  }

  /** The principal behind an Authorization header value; throws 401 in every other case. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (!header) throw unauthorized("missing bearer token");
    const m = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized("malformed Authorization header; expected 'Bearer <token>'");
    return this.resolve(m[1]!);
  }

  /** The principal of a token this node has cached and that is still valid, without waiting; else undefined. */
  cached(token: string): Principal | undefined {
    const now = this.now();
    const hit = this.cache.get(token);
    return hit && hit.cachedUntil > now && hit.expiresAt > now && !hit.suspended ? hit.principal : undefined;
  }

  /** When a token this node has cached expires (ms; Infinity for never), undefined when it is not cached. */
  expiry(token: string): number | undefined {
    return this.cache.get(token)?.expiresAt;
  }

  async resolve(token: string): Promise<Principal> {
    const now = this.now();
    const hit = this.cache.get(token);
    if (hit && hit.cachedUntil > now) {
      if (hit.expiresAt <= now) throw unauthorized("token expired");
      if (hit.suspended) throw suspendedError();
      return hit.principal;
    }
    if (!looksLikeToken(token)) throw unauthorized("malformed token");
    const hash = hashToken(token);
    const row = await principalOfToken(this.sql, hash);
    if (!row) throw unauthorized("unknown token");
    const who = { id: row.id, kind: row.kind };
    // a full token (scopes null) holds every scope its principal may; `admin` only while the principal may hold it
    const scopes = row.scopes === null ? fullScopes(who) : tokenScopes(row.scopes);
    const principal: Principal = {
      id: row.id,
      kind: row.kind,
      displayName: row.display_name,
      avatarKey: row.avatar_key,
      scopes,
      tokenId: row.token_id,
    };
    if (row.token_id !== null && (row.last_used_at === null || now - row.last_used_at.getTime() > TOUCH_AFTER_MS)) {
      // not waited for: a lookup costs no more round trips than before, and a lost write only shows an older time
      touchToken(this.sql, hash).catch(() => {});
    }
    const expiresAt = row.expires_at ? row.expires_at.getTime() : Number.POSITIVE_INFINITY;
    // read with the token (a check on the principal, whatever its token): a suspension's forget() drops this entry
    // on every node
    const suspended = row.suspended;
    this.remember(token, { principal, expiresAt, cachedUntil: now + CACHE_MS, suspended });
    if (expiresAt <= now) throw unauthorized("token expired");
    if (suspended) throw suspendedError();
    return principal;
  }

  /**
   * A token this node has just issued (its row committed): cached at once, so its first use waits for nothing. That
   * first use is often a WebSocket upgrade, which with a cached token happens inside the upgrade handler (see
   * runtime/ws/server.ts for why that matters).
   */
  issued(token: string, principal: Principal, expiresAt = Number.POSITIVE_INFINITY): void {
    this.remember(token, { principal, expiresAt, cachedUntil: this.now() + CACHE_MS, suspended: false });
  }

  /** Tell every node to forget what it cached for a principal (after rotation, deletion, profile change, suspension). */
  async forget(principalId: string): Promise<void> {
    this.drop(principalId);
    await publish(this.pubsub, CHANNELS.authForget, principalId);
  }

  private remember(key: string, entry: Cached): void {
    if (this.cache.size >= CACHE_MAX) {
      this.cache.clear();
      this.byPrincipal.clear();
    }
    this.cache.set(key, entry);
    let set = this.byPrincipal.get(entry.principal.id);
    if (!set) {
      set = new Set();
      this.byPrincipal.set(entry.principal.id, set);
    }
    set.add(key);
  }

  private drop(principalId: string): void {
    const set = this.byPrincipal.get(principalId);
    if (!set) return;
    for (const k of set) this.cache.delete(k);
    this.byPrincipal.delete(principalId);
  }
}

/** A named token's stored scopes as a set: only known ones. */
function tokenScopes(stored: string[]): ReadonlySet<Scope> {
  const known = new Set<string>(SCOPES);
  return new Set(stored.filter((s): s is Scope => known.has(s)));
}
