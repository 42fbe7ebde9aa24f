// Configuration: read once from the environment, validated with zod. A bad setting is refused in a plain sentence
// naming its rule (`PORT must be a whole number from 0 to 65535 (got "abc")`), not in zod's own wording.
import { z } from "zod";
import { type CorsPolicy, parseCorsOrigins } from "./http/cors.ts";
import { parseTrustProxy, type ProxyTrust } from "./http/client-ip.ts";
import { isClusterUrl, redisTarget } from "./engines/redis/target.ts";
import { parseRetention } from "./retention/duration.ts";

/** A duration that has to end (`24h`, `10m`): what `retention()` reads, without `unlimited`. */
function window(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((v, ctx): number => {
      try {
        const ms = parseRetention(v);
        if (ms !== null) return ms;
        ctx.addIssue({ code: "custom", message: `"${v}" must end: write it as 24h, 10m or 1d` });
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
      return z.NEVER;
    });
}

function retention() {
  return z
    .string()
    .default("unlimited")
    .transform((v, ctx): number | null => {
      try {
        return parseRetention(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    });
}

/** An absolute http:// or https:// URL (a collector's, for tracing). */
const httpUrl = z
  .string()
  .refine((u) => URL.canParse(u) && /^https?:\/\//i.test(u), "must be an http:// or https:// URL");

const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default("0.0.0.0"),
  DATABASE_URL: z
    .string()
    .url()
    .refine((u) => /^postgres(ql)?:\/\//i.test(u), "must be a postgres:// or postgresql:// URL")
    .optional(),
  /** Postgres schema Flock's tables live in (lets several deployments or test runs share one database). */
  PG_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, "PG_SCHEMA must be a lowercase SQL identifier")
    .default("public"),
  PG_POOL: z.coerce.number().int().min(1).max(100).default(4),
  /** One Redis (redis://, rediss://) or a Redis Cluster by some of its nodes (redis+cluster://h1:p1,h2:p2). */
  REDIS_URL: z
    .string()
    .superRefine((u, ctx) => {
      if (isClusterUrl(u)) {
        try {
          redisTarget(u);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: `bad cluster URL: ${(err as Error).message}` });
        }
        return;
      }
      if (!URL.canParse(u) || !/^rediss?:\/\//i.test(u)) {
        ctx.addIssue({
          code: "custom",
          message: "must be a redis:// or rediss:// URL, or redis+cluster://host:port,host:port",
        });
      }
    })
    .optional(),
  /** Prefix for every Redis key and channel. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]*$/)
    .default("flock:"),
  DATA_DIR: z.string().min(1).default("./data"),
  NODE_ID: z.coerce.number().int().min(0).max(1023).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Which hops' X-Forwarded-For to trust (runtime/http/client-ip.ts): off, a hop count, or addresses/CIDRs. */
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v, ctx): ProxyTrust | undefined => {
      try {
        return parseTrustProxy(v ?? "");
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Multiply every rate limit by this factor (load tests only). */
  FLOCK_LIMITS_SCALE: z.coerce.number().positive().max(1_000_000).default(1),
  /** 429s within FLOCK_BAN_WINDOW seconds that get an IP banned. */
  FLOCK_BAN_STRIKES: z.coerce.number().int().min(1).default(20),
  FLOCK_BAN_WINDOW: z.coerce.number().int().min(1).default(10),
  /** How long a ban lasts, in seconds. */
  FLOCK_BAN_SECONDS: z.coerce.number().int().min(1).default(300),
  /**
   * Moderation (issue 53): principal ids (comma-separated) that are moderators, besides those an admin granted
   * (npm run moderator). Never settable through the API.
   */
  FLOCK_MODERATORS: z
    .string()
    .default("")
    .transform((v, ctx): string[] => {
      const ids = v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      const bad = ids.find((id) => !/^P?[0-9]{1,19}$/.test(id));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `"${bad}" is not a principal id (digits, or P and digits)` });
        return z.NEVER;
      }
      return ids;
    }),
  /** Seconds an account counts as new and takes the new-account limits too (0: off). */
  FLOCK_NEW_ACCOUNT_AGE: z.coerce.number().int().min(0).default(3600),
  /** Moments, comments and friend requests a new account may make in an hour (runtime/limits/policies.ts). */
  FLOCK_NEW_ACCOUNT_MOMENTS: z.coerce.number().int().min(1).default(10),
  FLOCK_NEW_ACCOUNT_COMMENTS: z.coerce.number().int().min(1).default(20),
  FLOCK_NEW_ACCOUNT_FRIEND_REQUESTS: z.coerce.number().int().min(1).default(30),
  /** The same text (a moment or comment) one principal may post FLOCK_DUPLICATE_LIMIT times per window (seconds). */
  FLOCK_DUPLICATE_LIMIT: z.coerce.number().int().min(1).default(3),
  FLOCK_DUPLICATE_WINDOW: z.coerce.number().int().min(1).default(600),
  /** Server-Sent Events (GET /v1/events): streams one principal may hold open at once on a node (429 past it). */
  FLOCK_SSE_STREAMS: z.coerce.number().int().min(1).max(1000).default(5),
  /** Seconds an event-stream ticket (POST /v1/events/ticket) stays good; it is taken by its first use. */
  FLOCK_SSE_TICKET_SECONDS: z.coerce.number().int().min(1).max(300).default(30),
  /** Origins whose pages may call /v1 and open /v1/ws: `*` (default; tokens are bearer headers, never cookies) or a comma-separated list. */
  FLOCK_CORS_ORIGINS: z
    .string()
    .default("*")
    .transform((v, ctx): CorsPolicy => {
      try {
        return parseCorsOrigins(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** When set, /metrics on the public port answers only `Authorization: Bearer <this>` (401 otherwise); unset, 404 there. */
  FLOCK_METRICS_TOKEN: z.string().min(16, "FLOCK_METRICS_TOKEN must be at least 16 characters").optional(),
  /** The metrics listener (Prometheus convention: its own port, /metrics without a token). Unset: none; 0 picks a port. */
  FLOCK_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Interface the metrics listener binds (loopback by default: anything that reaches it may read it). */
  FLOCK_METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  /**
   * Tracing (docs/OPERATIONS.md, "Tracing"): the OTLP/HTTP collector the spans of each send go to (its base URL; the
   * traces go to its /v1/traces). Unset: off, and nothing of OpenTelemetry is loaded. The OpenTelemetry SDK reads the
   * other standard OTEL_* variables itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /**
   * The traces' own collector URL (whole, with its path), over the endpoint's `/v1/traces`: the SDK reads it; it is
   * checked here so that a bad one stops the start with a sentence, not with the SDK's TypeError.
   */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  /** The base URL clients reach this service at (behind a proxy, the proxy's): absolute URLs the node hands out name it. */
  FLOCK_PUBLIC_URL: z
    .string()
    .optional()
    .transform((v, ctx): string | undefined => {
      if (v === undefined) return undefined;
      try {
        return parsePublicUrl(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Largest JSON body accepted, in bytes. */
  FLOCK_JSON_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Seconds to wait for in-flight requests on shutdown. */
  FLOCK_SHUTDOWN_GRACE: z.coerce.number().min(0).default(10),
  /**
   * Seconds a SIGTERM'd node goes on serving before it stops listening, each answer closing its connection, so a
   * load balancer can stop routing to it and clients drop their idle connections (every answer's Keep-Alive hint
   * says so) before any connection closes under a request. 0: stop listening at once.
   */
  FLOCK_SHUTDOWN_LINGER: z.coerce.number().min(0).max(60).default(5),
  /**
   * How long messages are kept (`90d`, `12h`, `10m`; `unlimited`, the default). Past it a message is gone for everyone:
   * reads stop at the horizon at once, and its partition is dropped (runtime/retention/).
   */
  FLOCK_RETENTION_MESSAGES: retention(),
  /** How long moments (with their comments and likes) are kept; `unlimited` by default. */
  FLOCK_RETENTION_MOMENTS: retention(),
  /**
   * How long an Idempotency-Key's first answer is kept (`24h` by default, a minute at least); past it the key is
   * swept and may be used again (runtime/http/idempotency.ts).
   */
  FLOCK_IDEMPOTENCY_WINDOW: window("24h"),
  /** Humans (issue 5). The RFC 3986 authority wallet sign-in messages name (and that signatures must match). */
  FLOCK_DOMAIN: z.string().min(1).default("localhost"),
  /** EIP-155 chain id wallet sign-in messages name. */
  FLOCK_CHAIN_ID: z.coerce.number().int().positive().default(196),
  /** JSON-RPC endpoint of that chain: enables ERC-1271/6492 (smart wallet) signatures. EOA signatures only without it. */
  FLOCK_CHAIN_RPC_URL: z.string().url().optional(),
  /** Identity provider (Privy) app id: the required `aud` of its access tokens. Provider login is off without it. */
  PRIVY_APP_ID: z.string().min(1).optional(),
  PRIVY_ISSUER: z.string().min(1).default("privy.io"),
  /** The provider's ES256 verification key: a PEM (SPKI) or a JWK as JSON. Or PRIVY_JWKS_URL. */
  PRIVY_VERIFICATION_KEY: z.string().min(1).optional(),
  PRIVY_JWKS_URL: z.string().url().optional(),
  /** Lifetime of human `pt_` tokens, in seconds. */
  HUMAN_TOKEN_TTL: z.coerce
    .number()
    .int()
    .min(60)
    .default(7 * 86_400),
  /** Where uploaded files live (default: DATA_DIR/files). */
  FILES_DIR: z.string().min(1).optional(),
  /** Payments (issue 6). The x402 facilitator that verifies and settles payments; paid sends answer 503 without it. */
  FACILITATOR_URL: z.string().url().optional(),
  /** Seconds a payment authorization may stay valid (`maxTimeoutSeconds` of the payment requirements). */
  FLOCK_PAYMENT_TIMEOUT: z.coerce.number().int().min(10).max(86_400).default(300),
  /** Development: the Flock USD token deployed on a local chain (npm run payments:dev); enables that network. */
  FLOCK_LOCAL_TOKEN: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "must be an EVM address")
    .optional(),
  FLOCK_LOCAL_CHAIN_ID: z.coerce.number().int().positive().default(31337),
  /** Development: the local chain's transaction page prefix (the hash is appended), e.g. payments:dev's explorer. */
  FLOCK_LOCAL_EXPLORER_URL: z.string().url().optional(),
  /**
   * Web Push (issue 55; docs/ARCHITECTURE.md, "Web Push"): the VAPID key pair (RFC 8292) pushes are signed with, each
   * base64url (the public key an uncompressed P-256 point, the private key its 32-byte scalar), set both or neither.
   * Unset: the first node makes a pair and keeps it in Postgres, and every node reads that one.
   */
  FLOCK_VAPID_PUBLIC_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{87}$/, "must be base64url of an uncompressed P-256 point (87 characters)")
    .optional(),
  FLOCK_VAPID_PRIVATE_KEY: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, "must be base64url of a 32-byte P-256 private key (43 characters)")
    .optional(),
  /** Who push services may contact about this server's pushes: a mailto: or https: URL (default mailto:push@FLOCK_DOMAIN). */
  FLOCK_VAPID_SUBJECT: z
    .string()
    .refine((u) => /^(mailto:.+|https:\/\/.+)$/i.test(u) && URL.canParse(u), "must be a mailto: or https: URL")
    .optional(),
  /**
   * Development and tests only: accept push endpoints over http:// and on loopback, private and link-local addresses
   * (refused otherwise, when subscribing and again when the name is resolved to push).
   */
  FLOCK_PUSH_ALLOW_PRIVATE: z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((v) => v === "true" || v === "1"),
  /** Push subscriptions (browsers) one person may hold; one more answers 409 (runtime/limits/policies.ts). */
  FLOCK_PUSH_SUBSCRIPTIONS: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * Webhooks (runtime/webhooks/): `1` lets an endpoint be http:// and resolve to a private, loopback, link-local,
   * unique-local or unspecified address (tests and local development); off, only https:// to public addresses.
   */
  FLOCK_WEBHOOK_ALLOW_PRIVATE: z
    .enum(["0", "1"])
    .default("0")
    .transform((v) => v === "1"),
  /** Seconds an endpoint keeps failing every attempt before it is disabled (a day). */
  FLOCK_WEBHOOK_DISABLE_AFTER: z.coerce.number().int().min(1).default(86_400),
  /** Seconds the secret before a rotation still signs (24 h). */
  FLOCK_WEBHOOK_ROTATE_GRACE: z.coerce.number().int().min(0).default(86_400),
  /** Milliseconds one attempt may take (connect to the response's end) before it counts as failed. */
  FLOCK_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * Milliseconds an agent's delivery job may go unrenewed by its node before another node claims it (XAUTOCLAIM):
   * how soon the jobs of a node that died move on. A live node renews its jobs every third of it.
   */
  FLOCK_WEBHOOK_CLAIM_IDLE_MS: z.coerce.number().int().min(100).default(30_000),
  /** Milliseconds between a node's passes over the endpoints in Postgres (re-queues any job Redis lost). */
  FLOCK_WEBHOOK_SWEEP_MS: z.coerce.number().int().min(100).default(10_000),
});

export type Config = z.infer<typeof ConfigSchema>;

/** FLOCK_PUBLIC_URL as a base: http(s), a host, an optional path prefix; no credentials, query or fragment; no trailing slash. */
function parsePublicUrl(v: string): string {
  const bad = `"${v}" is not a base URL (http:// or https://, a host, optionally a path prefix; no query, fragment or credentials)`;
  if (!URL.canParse(v)) throw new Error(bad);
  const u = new URL(v);
  if (
    (u.protocol !== "http:" && u.protocol !== "https:") ||
    !u.hostname ||
    u.username ||
    u.password ||
    u.search ||
    u.hash ||
    v.includes("?") ||
    v.includes("#")
  ) {
    throw new Error(bad);
  }
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}

export class ConfigError extends Error {}

/** Settings whose empty value is a mistake rather than "use the default" (an empty PORT is not 8080). */
const NOT_EMPTY = new Set(["PORT", "HOST", "DATABASE_URL", "REDIS_URL", "DATA_DIR", "NODE_ID"]);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  const empty: string[] = [];
  for (const key of Object.keys(ConfigSchema.shape)) {
    const v = env[key];
    if (v === undefined) continue;
    if (v.trim() === "" && NOT_EMPTY.has(key)) {
      empty.push(`  ${key} is set but empty (unset it to use the default)`);
      continue;
    }
    if (v !== "") picked[key] = v;
  }
  const parsed = ConfigSchema.safeParse(picked);
  if (!parsed.success || empty.length > 0) {
    const issues = parsed.success ? [] : parsed.error.issues;
    const seen = new Set<string>();
    const lines = [...empty];
    for (const i of issues) {
      const key = String(i.path[0] ?? "");
      // a setting's own rule (refine, transform) is already a sentence; zod's built-in wording is replaced by the rule
      if (i.code === "custom") lines.push(`  ${i.path.join(".")}: ${i.message}`);
      else if (!seen.has(key))
        lines.push(`  ${ownRule(key, i.message) ?? `${key} must be ${ruleOf(key)}`}${got(key, picked[key])}`);
      seen.add(key);
    }
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** A value as the error quotes it; never for a setting that may hold a secret (a URL's password, a token, a key). */
const got = (key: string, v: string | undefined) =>
  /URL|TOKEN|KEY|SECRET/.test(key) ? "" : ` (got ${JSON.stringify(v ?? "")})`;

/** The schema's own sentence for a check (`PG_SCHEMA must be a lowercase SQL identifier`), not zod's default wording. */
function ownRule(key: string, message: string): string | undefined {
  if (message.startsWith(key)) return message;
  if (message.startsWith("must ")) return `${key} ${message}`;
  return undefined;
}

/** Rules the schema cannot put in words itself. */
const RULE_WORDS: Record<string, string> = { REDIS_PREFIX: "letters, digits and _ : . - only" };

/** A setting's rule in words, from its schema: `a whole number from 0 to 65535`, `one of info, debug...`, `a URL`. */
function ruleOf(key: string): string {
  if (RULE_WORDS[key]) return RULE_WORDS[key];
  let schema = (ConfigSchema.shape as Record<string, z.ZodType>)[key];
  while (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
  if (schema instanceof z.ZodEnum) return `one of ${schema.options.join(", ")}`;
  if (schema instanceof z.ZodNumber) {
    const what = schema.isInt ? "a whole number" : "a number";
    const checks = (schema.def.checks ?? []).map(
      (c) => c._zod.def as { check?: string; value?: number; inclusive?: boolean },
    );
    const low = checks.find((c) => c.check === "greater_than");
    const high = checks.find((c) => c.check === "less_than");
    if (low?.inclusive && high?.inclusive) return `${what} from ${low.value} to ${high.value}`;
    const parts = [
      low && (low.inclusive ? `${low.value} or more` : `above ${low.value}`),
      high && (high.inclusive ? `at most ${high.value}` : `below ${high.value}`),
    ];
    return [what, parts.filter(Boolean).join(" and ")].filter(Boolean).join(", ");
  }
  if (schema instanceof z.ZodString) {
    const formats = (schema.def.checks ?? []).map((c) => (c._zod.def as { format?: string }).format);
    if (formats.includes("url")) return "a URL (such as https://example.com)";
    if (formats.includes("regex")) return "in the documented format (see README.md, Configuration)";
    return "a non-empty text";
  }
  return "a valid value (see README.md, Configuration)";
}
