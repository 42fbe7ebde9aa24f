// Idempotency-Key on the routes that create something (IETF httpapi draft "The Idempotency-Key HTTP Header Field";
// docs/ARCHITECTURE.md, "Idempotency-Key"). The first request with a key claims it (a Postgres row, per principal);
// its answer is kept for FLOCK_IDEMPOTENCY_WINDOW (24 hours by default) and returned again to the same request with that key, marked
// `Idempotency-Replayed: true`. The same key with another request answers 422; a key whose request is still running
// answers 409. An answer that is no result (5xx, 429, a 402 challenge) is not kept: the key is let go and a retry
// runs again. A message sent with a key carries it (migration 0012), so a retry after its node died between the
// commit and the answer finds it (runtime/messaging/send.ts) instead of storing it twice.
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../auth.ts";
import { ApiError, invalid } from "../errors.ts";
import { firstIdAt } from "../ids.ts";
import type { Services } from "../services.ts";
import { claimKey, type KeyRow, keepAnswer, releaseKey, sweepKeys, takeOver } from "./idempotency-store.ts";
import { type Reply, replayed } from "./route.ts";

/**
 * How long another node's running request may hold a key before a retry takes it over: past every deadline a request
 * has (a send answers within ~4.5 s: docs/ARCHITECTURE.md, "Faults"), so its node has died or lost it; an upload,
 * which claims its key once its bytes are in (its fingerprint is their SHA-256) and holds it while they are published
 * (a copy into an object store), longer.
 */
export const RUNNING_STALE_S = { json: 6, streamed: 120 };
/**
 * How often a node drops expired keys (as requests come; any node may), and how many one statement drops: a sweep
 * goes on while its statements come back full, up to SWEEP_MAX_ROUNDS of them, so it keeps up with keys made at up
 * to SWEEP_ROUNDS * SWEEP_BATCH a minute (1.6 million: 27,000 keyed creates a second) and never runs long. A sweep
 * comes each minute, or each sixth of the window when that is shorter, so that a key outlives its window by at most
 * a sixth of it (a 1-minute window, as the soak runs, would otherwise keep up to twice its keys).
 */
const SWEEP_EVERY_MS = 60 * 1000;
const SWEEPS_PER_WINDOW = 6;
export const SWEEP_BATCH = 10_000;
export const SWEEP_MAX_ROUNDS = 160;
const KEY = /^[\x21-\x7e]{1,255}$/;
/** Answers that are no result: a retry must run the request again. */
const NOT_KEPT = new Set([402, 409, 429]);

export class IdempotentRequests {
  /** This node's token in the rows it claims. */
  private readonly owner = randomBytes(9).toString("base64url");
  /** "<principal> <key>" of the requests running here now. */
  private readonly running = new Set<string>();
  private lastSweep = -Infinity;
  private sweeping: Promise<number> | null = null;
  /** FLOCK_IDEMPOTENCY_WINDOW, in seconds. */
  private readonly windowS: number;
  private readonly sweepEveryMs: number;

  constructor(private readonly svc: Services) {
    this.windowS = svc.config.FLOCK_IDEMPOTENCY_WINDOW / 1000;
    this.sweepEveryMs = Math.min(SWEEP_EVERY_MS, svc.config.FLOCK_IDEMPOTENCY_WINDOW / SWEEPS_PER_WINDOW);
  }

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
    const fingerprint = fingerprintOf(request);
    const held = `${principal.id} ${key}`;
    // one request per key at a time on this node; a row this node holds that no request here runs was lost (its
    // answer could not be kept or let go: Postgres was away), and is taken over
    if (this.running.has(held)) throw busy();
    this.running.add(held);
    try {
      const got = await claimKey(sql, principal.id, key, fingerprint, this.owner);
      if (got !== true) {
        const answer = settledAnswer(got, fingerprint, this.windowS);
        if (answer !== null) return answer;
        const expired = got.age_s >= this.windowS;
        if (!expired && got.owner !== this.owner && got.running_s < staleS) throw busy();
        if (!(await takeOver(sql, principal.id, key, got.owner, this.owner, expired))) throw busy();
      }
      return await this.runClaimed(principal, key, handle);
    } finally {
      this.running.delete(held);
    }
  }

  /**
   * A send's key, to fold into the statement that stores its message (runtime/messaging/messages-store.ts): the key
   * is claimed there with its answer, in the message's own commit, so a keyed send costs what an unkeyed one does.
   * What cannot fold (a paid send, a key found running or expired) runs the usual way, through `once`.
   */
  keyed(principal: Principal, key: string, request: (string | Buffer)[], staleS: number): KeyedRequest {
    checkIdempotencyKey(key);
    this.sweep();
    const fingerprint = fingerprintOf(request);
    return {
      fingerprint,
      owner: this.owner,
      since: this.since(),
      settled: (row) => (row === null ? null : settledAnswer(row, fingerprint, this.windowS)),
      once: (make) => this.run(principal, key, request, staleS, make),
      refused: async (err) => {
        const status = err.status;
        if (status >= 500 || NOT_KEPT.has(status)) return "stands";
        const got = await claimKey(this.svc.sql, principal.id, key, fingerprint, this.owner, {
          status,
          body: JSON.stringify(err.body()),
        });
        // kept now: the refusal stands; else what the key answered first, or (no answer kept: running elsewhere, or
        // a first request whose answer was lost) the usual steps decide
        return got === true ? "stands" : (settledAnswer(got, fingerprint, this.windowS) ?? "unsettled");
      },
    };
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

  /** The smallest message id a key's window holds now (a message sent with a key before it is no retry's). */
  since(): bigint {
    return firstIdAt(this.svc.now() - this.windowS * 1000);
  }

  /** Start a sweep if one is due and none runs here (as requests come); the sweep itself, for tests. */
  sweep(): Promise<number> | null {
    const now = this.svc.now();
    if (this.sweeping !== null || now - this.lastSweep < this.sweepEveryMs) return null;
    this.lastSweep = now;
    const run = this.sweepAll().finally(() => {
      this.sweeping = null;
    });
    this.sweeping = run;
    return run;
  }

  /** Drop every expired key, a batch per statement; how many went. */
  private async sweepAll(): Promise<number> {
    let gone = 0;
    try {
      for (let round = 0; round < SWEEP_MAX_ROUNDS; round++) {
        const n = await sweepKeys(this.svc.sql, this.windowS, SWEEP_BATCH);
        gone += n;
        if (n < SWEEP_BATCH) break;
      }
    } catch (err) {
      this.svc.log.warn({ err }, "expired idempotency keys not swept; next sweep retries");
    }
    return gone;
  }
}

/** A send's Idempotency-Key, folded into its statement (IdempotentRequests.keyed). */
export interface KeyedRequest {
  /** SHA-256 of what was asked (method, path, query, body). */
  fingerprint: Buffer;
  /** This node's token, in the rows it claims. */
  owner: string;
  /** The smallest message id within the key's window (FLOCK_IDEMPOTENCY_WINDOW): an older message is no retry's. */
  since: bigint;
  /** What a key found held answers: its first answer replayed, or a 422 thrown; null when not settled (running, expired, unseen). */
  settled(row: KeyRow | null): Reply | null;
  /** Run `make` under the key the usual way: claim, run, keep its answer (or replay, 409, 422). */
  once(make: () => Promise<Reply>): Promise<Reply>;
  /**
   * A refusal of the send before it was stored: kept as the key's answer ("stands": the refusal is the answer; a 5xx,
   * 409 or 429 stands unkept), or the key's first answer, or "unsettled": the key is held with no answer kept (running
   * elsewhere, or its first request's answer was lost), for `once` to decide.
   */
  refused(err: ApiError): Promise<Reply | "stands" | "unsettled">;
}

/** What asked for a key's answer: the SHA-256 of its parts (method, path, query, body; an upload's hash). */
function fingerprintOf(request: (string | Buffer)[]): Buffer {
  const hash = createHash("sha256");
  for (const part of request) hash.update(part).update("\n");
  return hash.digest();
}

/**
 * A held key's answer for a request of this fingerprint: its kept answer replayed; a 422 when another request used it
 * (unless expired); null when it has no answer to give yet (running, or expired: the caller takes it over or waits).
 */
function settledAnswer(got: KeyRow, fingerprint: Buffer, windowS: number): Reply | null {
  if (got.age_s >= windowS) return null;
  if (!got.fingerprint.equals(fingerprint)) {
    throw new ApiError(
      "idempotency_key_reused",
      "this Idempotency-Key was used with a different request; use a new key for a new request",
    );
  }
  return got.status !== null ? replay(got.status, got.body ?? "") : null;
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
