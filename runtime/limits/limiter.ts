// Applies the policies of policies.ts through the limits engine: 429 with Retry-After and the SPEC body,
// the IETF RateLimit-Policy / RateLimit fields, and IP bans for clients that keep hammering after 429s.
import { isIP } from "node:net";
import type { BanRule, LimitsEngine } from "../engines/limits.ts";
import type { PubSub } from "../engines/pubsub.ts";
import { CHANNELS, listen, publish } from "../engines/node-channels.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { type Metrics, since } from "../metrics.ts";
import { ApiError } from "../errors.ts";
import { type Policy, POLICIES, type PolicyName, type PolicyOverrides } from "./policies.ts";
import { TakeAhead } from "./take-ahead.ts";

export interface LimiterOptions {
  scale: number;
  ban: BanRule;
  /** Where a malformed ban from another node is reported. */
  log?: Logger;
  /** Counts refusals and bans, and times the engine's take (runtime/metrics.ts). */
  metrics?: Metrics;
  /**
   * Answer a take at once while its bucket is far from empty, the engine's take sent behind the answer (take-ahead.ts):
   * for a shared engine (Redis), where each take waited a round trip.
   */
  takeAhead?: boolean;
  /** Limits and windows configuration sets over the table's (the spam limits: runtime/moderation/spam.ts). */
  overrides?: PolicyOverrides;
}

/** A node's limiter options, read from its configuration. */
export function limiterOptions(config: Config, log?: Logger, metrics?: Metrics): LimiterOptions {
  return {
    scale: config.FLOCK_LIMITS_SCALE,
    ban: {
      strikes: config.FLOCK_BAN_STRIKES,
      windowMs: config.FLOCK_BAN_WINDOW * 1000,
      banMs: config.FLOCK_BAN_SECONDS * 1000,
    },
    log,
    metrics,
    takeAhead: config.REDIS_URL !== undefined,
    overrides: {
      new_account_moments: { limit: config.FLOCK_NEW_ACCOUNT_MOMENTS },
      new_account_comments: { limit: config.FLOCK_NEW_ACCOUNT_COMMENTS },
      new_account_friend_requests: { limit: config.FLOCK_NEW_ACCOUNT_FRIEND_REQUESTS },
      duplicate_content: { limit: config.FLOCK_DUPLICATE_LIMIT, window: config.FLOCK_DUPLICATE_WINDOW },
    },
  };
}

/** Forget ended bans at least this often (ms of the clock), and whenever the map has doubled since the last time. */
const SWEEP_EVERY_MS = 10_000;
const SWEEP_MIN_SIZE = 1024;

export class Limiter {
  /** Bans known to this node (ip -> until ms), learnt from its own strikes and from other nodes. */
  private readonly bans = new Map<string, number>();
  private lastSweep = -Infinity;
  private sweepAt = SWEEP_MIN_SIZE;
  private readonly ahead: TakeAhead | undefined;

  constructor(
    private readonly engine: LimitsEngine,
    private readonly pubsub: PubSub,
    private readonly opts: LimiterOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.ahead = opts.takeAhead ? new TakeAhead(engine) : undefined;
  }

  /** Subscribes to other nodes' bans, then loads the bans already running (published before this node started). */
  async start(): Promise<void> {
    await listen(this.pubsub, CHANNELS.limitsBan, this.opts.log, (ban) => {
      this.remember(ban.ip, ban.until);
    });
    for (const [ip, until] of await this.engine.activeBans(this.now())) {
      if (isIP(ip) !== 0) this.remember(ip, until);
    }
  }

  /** How many bans this node holds (tests). */
  bansKnown(): number {
    return this.bans.size;
  }

  /** A policy as this node applies it: the table's, with what configuration sets over it. */
  policy(name: PolicyName): Policy {
    const o = this.opts.overrides?.[name];
    const p: Policy = POLICIES[name];
    return o ? { ...p, limit: o.limit ?? p.limit, window: o.window ?? p.window } : p;
  }

  capacity(policy: PolicyName): number {
    return Math.max(1, Math.floor(this.policy(policy).limit * this.opts.scale));
  }

  /** Throws 403 ip_banned while the IP is banned. Local check only: no round trip. */
  checkBan(ip: string): void {
    const until = this.bans.get(ip);
    if (until === undefined) return;
    const now = this.now();
    if (until <= now) {
      this.bans.delete(ip);
      return;
    }
    this.opts.metrics?.bans.refused.inc();
    throw banned(until - now);
  }

  /**
   * Take one token of `policy` for `scope` (principal id, IP or account key). Sets the RateLimit fields on
   * `headers`; throws 429 (and strikes the IP) when the bucket is empty, or `refuse`'s error (no strike) when given.
   */
  async enforce(
    policy: PolicyName,
    scope: string,
    ip: string,
    headers: Record<string, string>,
    refuse?: (retryAfter: number) => ApiError,
  ): Promise<void> {
    const p = this.policy(policy);
    const cap = this.capacity(policy);
    const now = this.now();
    const m = this.opts.metrics;
    const started = performance.now();
    const key = `${policy}:${scope}`;
    const got = this.ahead?.take(key, cap, p.window * 1000, now) ?? this.engine.take(key, cap, p.window * 1000, now);
    // timed only when it waited for the engine (a take answered ahead waits for nothing)
    const r = got instanceof Promise ? await got : got;
    if (got instanceof Promise) m?.redis.rateLimit.observe(since(started));
    headers["RateLimit-Policy"] = `"${policy}";q=${cap};w=${p.window}`;
    const retry = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    headers["RateLimit"] = `"${policy}";r=${r.remaining};t=${r.allowed ? Math.ceil(r.resetMs / 1000) : retry}`;
    if (r.allowed) return;
    m?.rateLimited[policy].inc();
    // a refusal of its own (the duplicate-content limit) strikes no address: the client is not hammering
    if (refuse) throw refuse(retry);
    // only an address is struck (the engines refuse any other text too): no client text becomes a ban key
    const until = isIP(ip) === 0 ? 0 : await this.engine.strike(ip, this.opts.ban, now);
    if (until > now) {
      const known = this.bans.get(ip);
      if (known === undefined || known <= now) m?.bans.started.inc();
      throw banned(this.learnBan(ip, until) - now);
    }
    throw new ApiError(
      "rate_limited",
      `rate limit exceeded: ${cap} per ${p.window === 1 ? "second" : `${p.window} seconds`} per ${p.scope}`,
      { retry_after: retry },
      { "Retry-After": String(retry), ...headers },
    );
  }

  /** A ban this node's strike found: held and told to the other nodes; answers its (capped) end. */
  private learnBan(ip: string, until: number): number {
    const known = this.bans.get(ip);
    if (known !== undefined && known >= until) return known;
    const capped = this.remember(ip, until) ?? until;
    void publish(this.pubsub, CHANNELS.limitsBan, { ip, until: capped }).catch(() => {});
    return capped;
  }

  /** Holds a ban, never longer than FLOCK_BAN_SECONDS from now; answers the end it kept (undefined: already over). */
  private remember(ip: string, until: number): number | undefined {
    const now = this.now();
    const capped = Math.min(until, now + this.opts.ban.banMs);
    if (capped <= now) return undefined;
    this.bans.set(ip, capped);
    if (this.bans.size >= this.sweepAt || now - this.lastSweep >= SWEEP_EVERY_MS) {
      for (const [k, end] of this.bans) if (end <= now) this.bans.delete(k);
      this.lastSweep = now;
      this.sweepAt = Math.max(SWEEP_MIN_SIZE, 2 * this.bans.size);
    }
    return capped;
  }
}

function banned(ms: number): ApiError {
  const secs = Math.max(1, Math.ceil(ms / 1000));
  return new ApiError(
    "ip_banned",
    "this address kept retrying after being rate limited and is banned for a while",
    { retry_after: secs },
    { "Retry-After": String(secs) },
  );
}
