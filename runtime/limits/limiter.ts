// Applies the policies of policies.ts through the limits engine: 429 with Retry-After and the SPEC body,
// the IETF RateLimit-Policy / RateLimit fields, and IP bans for clients that keep hammering after 429s.
import type { BanRule, LimitsEngine } from "../engines/limits.ts";
import type { PubSub } from "../engines/pubsub.ts";
import { ApiError } from "../errors.ts";
import { POLICIES, type PolicyName } from "./policies.ts";

export interface LimiterOptions {
  scale: number;
  ban: BanRule;
}

const BAN_CHANNEL = "limits.ban";

export class Limiter {
  /** Bans known to this node (ip -> until ms), learnt from its own strikes and from other nodes. */
  private readonly bans = new Map<string, number>();

  constructor(
    private readonly engine: LimitsEngine,
    private readonly pubsub: PubSub,
    private readonly opts: LimiterOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    await this.pubsub.subscribe(BAN_CHANNEL, (buf) => {
      const [ip, until] = buf.toString().split(" ");
      if (ip && until) this.bans.set(ip, Number(until));
    });
  }

  capacity(policy: PolicyName): number {
    return Math.max(1, Math.floor(POLICIES[policy].limit * this.opts.scale));
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
    throw banned(until - now);
  }

  /**
   * Take one token of `policy` for `scope` (principal id, IP or account key). Sets the RateLimit fields on
   * `headers`; throws 429 (and strikes the IP) when the bucket is empty.
   */
  async enforce(policy: PolicyName, scope: string, ip: string, headers: Record<string, string>): Promise<void> {
    const p = POLICIES[policy];
    const cap = this.capacity(policy);
    const now = this.now();
    const r = await this.engine.take(`${policy}:${scope}`, cap, p.window * 1000, now);
    headers["RateLimit-Policy"] = `"${policy}";q=${cap};w=${p.window}`;
    const retry = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
    headers["RateLimit"] = `"${policy}";r=${r.remaining};t=${r.allowed ? Math.ceil(r.resetMs / 1000) : retry}`;
    if (r.allowed) return;
    const until = await this.engine.strike(ip, this.opts.ban, now);
    if (until > now) {
      this.learnBan(ip, until);
      throw banned(until - now);
    }
    throw new ApiError(
      "rate_limited",
      `rate limit exceeded: ${cap} per ${p.window === 1 ? "second" : `${p.window} seconds`} per ${p.scope}`,
      { retry_after: retry },
      { "Retry-After": String(retry), ...headers },
    );
  }

  private learnBan(ip: string, until: number): void {
    if (this.bans.get(ip) === until) return;
    this.bans.set(ip, until);
    void this.pubsub.publish(BAN_CHANNEL, `${ip} ${until}`).catch(() => {});
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
