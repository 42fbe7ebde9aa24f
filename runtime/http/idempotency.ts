// Idempotency-Key on the routes that create something (IETF httpapi draft "The Idempotency-Key HTTP Header Field";
// docs/ARCHITECTURE.md, "Idempotency-Key"). The first request with a key claims it (a Postgres row, per principal);
// its answer is kept for 24 hours and returned again to the same request with that key, marked
// `Idempotency-Replayed: true`. The same key with another request answers 422; a key whose request is still running
// answers 409. An answer that is no result (5xx, 429, a 402 challenge) is not kept: the key is let go and a retry
// runs again. A message sent with a key carries it (migration 0012), so a retry after its node died between the
// commit and the answer finds it (runtime/messaging/send.ts) instead of storing it twice.
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../auth.ts";
import { ApiError, invalid } from "../errors.ts";
import type { Services } from "../services.ts";
import { claimKey, keepAnswer, releaseKey, sweepKeys, takeOver } from "./idempotency-store.ts";
import { type Reply, replayed } from "./route.ts";

/** How long a key's answer is kept. */
export const IDEMPOTENCY_HOURS = 24;
/**
 * How long another node's running request may hold a key before a retry takes it over: past every deadline a request
 * has (a send answers within ~4.5 s: docs/ARCHITECTURE.md, "Faults"), so its node has died or lost it; an upload,
 * which claims its key once its bytes are in (its fingerprint is their SHA-256) and holds it while they are published
 * (a copy into an object store), longer.
 */
export const RUNNING_STALE_S = { json: 6, streamed: 120 };
/** How often a node drops expired keys (as requests come; any node may). */
const SWEEP_EVERY_MS = 10 * 60 * 1000;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Answers that are no result: a retry must run the request again. */
const NOT_KEPT = new Set([402, 409, 429]);

export class IdempotentRequests {
  /** This node's token in the rows it claims. */
  private readonly owner = randomBytes(9).toString("base64url");
  /** "<principal> <key>" of the requests running here now. */
  private readonly running = new Set<string>();
  private lastSweep = -Infinity;

  constructor(private readonly svc: Services) {}

  /**
   * Run `handle` once for `key`: the first time, or again after a failure that left nothing; otherwise answer what
   * the key's first request answered. `request` fingerprints what was asked (method, path, query, body).
   */
  async run(
    principal: Principal,
    key: string,
    request: (string | Buffer)[],
    staleS: number,
    handle: () => Promise<Reply>,
  ): Promise<Reply> {
    checkIdempotencyKey(key);
    const sql = this.svc.sql;
    this.sweep();
    const hash = createHash("sha256");
    for (const part of request) hash.update(part).update("\n");
    const fingerprint = hash.digest();
    const held = `${principal.id} ${key}`;
    // one request per key at a time on this node; a row this node holds that no request here runs was lost (its
    // answer could not be kept or let go: Postgres was away), and is taken over
    if (this.running.has(held)) throw busy();
    this.running.add(held);
    try {
      const got = await claimKey(sql, principal.id, key, fingerprint, this.owner);
      if (got !== true) {
        const expired = got.age_s >= IDEMPOTENCY_HOURS * 3600;
        if (!expired && !got.fingerprint.equals(fingerprint)) {
          throw new ApiError(
            "idempotency_key_reused",
            "this Idempotency-Key was used with a different request; use a new key for a new request",
          );
        }
        if (!expired && got.status !== null) return replay(got.status, got.body ?? "");
        if (!expired && got.owner !== this.owner && got.running_s < staleS) throw busy();
        if (!(await takeOver(sql, principal.id, key, got.owner, this.owner, expired))) throw busy();
      }
      return await this.runClaimed(principal, key, handle);
    } finally {
      this.running.delete(held);
    }
  }

  /** Run the request of a key this node has claimed, and keep its answer or let the key go. */
  private async runClaimed(principal: Principal, key: string, handle: () => Promise<Reply>): Promise<Reply> {
    const sql = this.svc.sql;
    const letGo = () => releaseKey(sql, principal.id, key, this.owner).catch(() => {});
    let reply: Reply;
    try {
      reply = await handle();
    } catch (err) {
      if (err instanceof ApiError && err.status < 500 && !NOT_KEPT.has(err.status))
        await this.keep(principal, key, err.status, JSON.stringify(err.body()));
      else await letGo();
      throw err;
    }
    if (reply.status >= 500 || NOT_KEPT.has(reply.status) || reply.stream !== undefined) {
      await letGo();
      return reply;
    }
    await this.keep(
      principal,
      key,
      reply.status,
      reply.raw !== undefined ? reply.raw.data.toString() : reply.body === undefined ? "" : JSON.stringify(reply.body),
    );
    return reply;
  }

  /**
   * Keep a key's answer. The request's own answer stands even when this fails (what it did is done): the key then
   * stays claimed by a request no longer running, and a retry takes it over (a message is then found by its key).
   */
  private async keep(principal: Principal, key: string, status: number, body: string): Promise<void> {
    await keepAnswer(this.svc.sql, principal.id, key, this.owner, status, body).catch((err: unknown) => {
      this.svc.log.warn(
        { err, principal: principal.id },
        "an idempotency key's answer was not kept; a retry runs the request again",
      );
    });
  }

  private sweep(): void {
    const now = this.svc.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    sweepKeys(this.svc.sql, IDEMPOTENCY_HOURS, 10_000).catch((err: unknown) =>
      this.svc.log.warn({ err }, "expired idempotency keys not swept; next sweep retries"),
    );
  }
}

/** A key is 1 to 255 visible ASCII characters; 400 otherwise (checked before a streamed body is read, too). */
export function checkIdempotencyKey(key: string): void {
  if (!KEY.test(key)) throw invalid("Idempotency-Key: 1 to 255 visible ASCII characters", { field: "Idempotency-Key" });
}

const busy = () =>
  new ApiError(
    "conflict",
    "a request with this Idempotency-Key is still running; retry shortly",
    {},
    { "Retry-After": "1" },
  );

/** The kept answer, marked as a replay. */
function replay(status: number, body: string): Reply {
  return replayed({ status, ...(body === "" ? {} : { raw: { type: "application/json", data: body } }) });
}
