// What the chaos traffic saw, per message and per request, and the figures a fault is judged on.
//
// Messages are keyed by their body (a unique tag), so a send that got no 201 (timed out, 503, connection lost) is
// still recognised when it is delivered later. Ordering for "delivered again after an ack" is strict, to rule out
// false positives, and goes by the tracker's own sequence of events (no ties, as milliseconds have): a delivery
// counts when the long poll that brought it STARTED after the ack's 204 had ARRIVED, or when its WebSocket frame
// ARRIVED after the ack frame's reply (one socket's frames arrive in the order the server sent them, so the server
// sent the message again after it had confirmed the ack).
//
// Senders retry a send that got no 201 with its Idempotency-Key, as the SDK does (traffic.ts): each attempt is kept, and
// Postgres says when a message was made (created_at), so the attempt that committed it is known. A send committed by
// an attempt that got no 201 (its node died between the commit and the answer) must still end with a 201 naming that
// message, from a later attempt with the same key, and be delivered once. A body stored or delivered as more than one
// message is a duplicate.
//
// Issue 38's cases (each a column of the summary):
// - "503 but committed": the attempt that made a committed message answered 503 without `"stored":"unknown"` (a 503
//   says "not stored"; only `stored: unknown` leaves it open, and the senders then retry with the key).
// - refused acks: an ack answered 503 / an error (HTTP) or an error frame (WebSocket) must be acknowledged within
//   ACK_RECOVERY_MS of the backend's recovery (the fault's end, or the refusal if later): by the 204 of the receiver's
//   retry, or by the node's own ack frame for the refused ack's ref (it retries the ack on that socket).
// - redeliveries: the hand-outs of one message id to its receiver, at most MAX_REDELIVERIES_PER_S per second over
//   any REDELIVERY_WINDOW_MS (a long poll in a hot loop while acks fail ran at ~20/s; the node's backoff, 1 s doubling
//   to 8 s, makes at most ~3 in 5 s, and a WebSocket reconnect after each of 3 kills 2 s apart about as many).
// - resets during SIGTERM: HTTP requests that got no answer but a reset (ECONNRESET, undici's "other side closed",
//   EPIPE) between the signal and the node's return; a graceful shutdown answers everything it accepted (before the
//   node lingered on SIGTERM, FLOCK_SHUTDOWN_LINGER, 0-7 sends a run were reset at its exit). Any reset fails the run.
// - a budget of node log lines per fault (both nodes run at LOG_LEVEL=warn; every line counts).

export const HANG_MS = 5_000;
export const STUCK_MS = 10_000;
/** A refused ack must be acknowledged within this of the backend's recovery. */
export const ACK_RECOVERY_MS = 2_000;
/** Hand-outs of one message to its receiver: at most this many again per second, over any REDELIVERY_WINDOW_MS. */
export const MAX_REDELIVERIES_PER_S = 3;
export const REDELIVERY_WINDOW_MS = 5_000;
/** What a reset request looks like (errorStatus in traffic.ts): a connection dropped with no answer. */
export const RESET_STATUSES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);
/** The HTTP requests the traffic makes (a WebSocket's frames are not request/answer pairs on a connection). */
const HTTP_KINDS = new Set(["send", "poll", "ack"]);
/**
 * Lines both nodes may log during one fault (from its agents' registration to the end of its drain). Measured on
 * 2 cores with a circuit line per state change and a 10 s summary: 3 to 8 lines a fault (kill-sender: a start line
 * per restart and the takeovers; redis-empty: 7); before that, a line per refused request logged 4,523 in a 3 s
 * Redis outage, and a long poll in a hot loop 307 for one ack. 50 is ~6x the noisiest fault, and about a third of
 * one second of refusals at the suite's 160 sends/s.
 */
export const LOG_LINE_BUDGET = 50;

export interface Delivery {
  at: number;
  /** The message id it was delivered under (two ids for one body: stored twice). */
  id?: string;
  /** Tracker.mark() when the long poll was sent, or when the WebSocket frame arrived. */
  fetchSeq: number;
  via: "poll" | "ws";
}

/** One attempt of a send (the first, or a retry with the same Idempotency-Key). */
export interface Attempt {
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or what failed (errorStatus: "timeout", "ECONNRESET", ...). */
  status: string;
  /** Answered with `Idempotency-Replayed: true` (the first answer to its key). */
  replayed?: boolean;
  /** A 503 whose body said `"stored":"unknown"` (the node could not tell whether it committed: retry with the key). */
  storedUnknown?: boolean;
}

export interface MessageRecord {
  tag: string;
  to: string;
  sentAt: number;
  /** When its sender ended (the final answer, after every retry). */
  answeredAt?: number;
  /** The final status (the last attempt's). */
  status?: string;
  id?: string;
  /** The send's Idempotency-Key, the same on every attempt. */
  key?: string;
  /** Every attempt, in order (empty for a record made up by hand: then its one attempt is sentAt..answeredAt). */
  attempts: Attempt[];
  deliveries: Delivery[];
  ackConfirmedAt?: number;
  /** Tracker.mark() when the ack's confirmation arrived. */
  ackSeq?: number;
  /** Deliveries whose fetch started after the ack's confirmation. */
  afterAck: number;
  /** When an ack of it was first refused (HTTP: 503, another 5xx or no answer; WebSocket: an error frame). */
  ackRefusedAt?: number;
}

export interface RequestRecord {
  kind: string;
  startedAt: number;
  endedAt: number;
  status: string;
  /** How long it may legitimately take (a long poll's wait); longer than that plus HANG_MS is a hang. */
  allowanceMs: number;
}

export class Tracker {
  readonly messages = new Map<string, MessageRecord>();
  readonly requests: RequestRecord[] = [];
  /** Deliveries of bodies this fault never sent (another fault's leftovers): ignored, but counted. */
  foreign = 0;

  private seq = 0;

  constructor(readonly fault: string) {}

  /** The next event's place in the order of everything this tracker saw. */
  mark(): number {
    return ++this.seq;
  }

  newTag(sender: number, seq: number): string {
    return `chaos ${this.fault} s${sender} #${seq}`;
  }

  sent(tag: string, to: string, at: number): MessageRecord {
    const rec: MessageRecord = { tag, to, sentAt: at, attempts: [], deliveries: [], afterAck: 0 };
    this.messages.set(tag, rec);
    return rec;
  }

  request(kind: string, startedAt: number, status: string, allowanceMs = 0): void {
    this.requests.push({ kind, startedAt, endedAt: Date.now(), status, allowanceMs });
  }

  delivered(body: string, d: Delivery): MessageRecord | undefined {
    const rec = this.messages.get(body);
    if (!rec) {
      this.foreign++;
      return undefined;
    }
    rec.deliveries.push(d);
    if (rec.ackSeq !== undefined && d.fetchSeq > rec.ackSeq) rec.afterAck++;
    return rec;
  }

  /** An ack of `rec` was refused (the first refusal is kept: recovery is measured from it or the fault's end). */
  ackRefused(rec: MessageRecord, at: number): void {
    rec.ackRefusedAt ??= at;
  }

  ackConfirmed(rec: MessageRecord, at: number): void {
    if (rec.ackConfirmedAt !== undefined) return;
    rec.ackConfirmedAt = at;
    rec.ackSeq = this.mark();
  }

  /**
   * Every 201'd message (and every one of `committed`, whatever its sender was told) acked, or past its stuck
   * deadline.
   */
  drained(now: number, committed?: Set<string>): boolean {
    for (const rec of this.messages.values()) {
      if (rec.status === undefined) return false; // still in flight
      if (rec.ackConfirmedAt !== undefined) continue;
      if (rec.status !== "201" && !committed?.has(rec.tag)) continue;
      if (now < (rec.answeredAt ?? rec.sentAt) + STUCK_MS + 500) return false;
    }
    return true;
  }
}

export interface Phases {
  /** When the fault was injected. */
  injectAt: number;
  /** When the harness had undone it (backend answering again, restarted node answering /healthz). */
  endAt: number;
}

export interface FaultResult {
  name: string;
  description: string;
  sent: number;
  created: number;
  delivered: number;
  lost: number;
  afterAck: number;
  ackNotDurable: number;
  stuck: number;
  /** Bodies stored as more than one message in Postgres, or delivered under more than one message id. */
  duplicates: number;
  /** Sends that took more than one attempt (retried with the same Idempotency-Key). */
  retried: number;
  /** Sends whose final answer was a replay (`Idempotency-Replayed: true`). */
  replayed: number;
  /** Seconds from the fault's end to the first delivery of a message sent after it; null if none. */
  recoverSeconds: number | null;
  faultSeconds: number;
  statuses: string;
  bad5xx: number;
  hangs: number;
  redelivered: number;
  no201Delivered: number;
  /** Sends committed by an attempt that got no 201 (whatever the retries got later). */
  no201Committed: number;
  /** Of those, the ones whose sender never got a 201 naming the message delivered (no final 201, or another id). */
  no201Unresolved: number;
  /** Seconds from the failed answer to the delivery of the slowest message committed without a 201. */
  no201CommittedLatest: number | null;
  /** Sends whose committing attempt answered 503 without `"stored":"unknown"`. */
  committed503: number;
  /** 503 answers to sends that said `"stored":"unknown"` (allowed: the sender retries with its key). */
  unknown503: number;
  /** Messages with an ack refused. */
  refusedAcks: number;
  /** Of those, acknowledged later than ACK_RECOVERY_MS after recovery, or never. */
  refusedAcksLate: number;
  /** Of those, acknowledged in Postgres but never confirmed to the receiver (the time is unknown; not judged). */
  refusedAcksUnconfirmed: number;
  /** Seconds from recovery to the acknowledgment of the slowest refused ack (null: none refused, or none confirmed). */
  refusedAckSlowest: number | null;
  /** The most hand-outs again of one message per second over any REDELIVERY_WINDOW_MS. */
  redeliveryRate: number;
  /** Messages handed out again faster than MAX_REDELIVERIES_PER_S. */
  hotLoops: number;
  /** HTTP requests reset during a graceful shutdown (null: not a graceful fault). */
  resets: number | null;
  /** Lines the nodes logged during the fault (null: not counted). */
  logLines: number | null;
  failures: string[];
  worst: string[];
  /** Rows of a fault's own (the rolling restart's clients), printed after the common ones. */
  notes?: [string, string][];
  /** Said after "pass" on the verdict line: the bound a fault states. */
  verdict?: string;
}

/** How a fault's clients fared as their nodes went away (the rolling restart's SDK agents, test/chaos/sdk-agents.ts). */
export interface ClientsSeen {
  clients: number;
  /** Errors that reached the application: a send that gave up, a receiving loop that threw. */
  sdkErrors: string[];
  /** Each time a client could not receive, and for how long (from losing its socket or poll to receiving again). */
  gaps: { via: string; ms: number; never?: boolean }[];
  /** Sockets closed and polls cut by the fault. */
  cuts: Record<string, number>;
  /** Every client must be receiving again within this of losing its node. */
  backWithinMs: number;
}

/** Quantile `q` (0-1) of `xs`, nearest rank; 0 for none. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/**
 * Adds a client-side verdict to a judged fault: no error reached an SDK caller, and every client was receiving again
 * within `backWithinMs` of losing its node. Also states how fast the 201'd messages arrived (201 to first delivery).
 */
export function judgeClients(r: FaultResult, t: Tracker, c: ClientsSeen, pg: Durable): FaultResult {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const slowest = c.gaps.reduce((m, g) => Math.max(m, g.ms), 0);
  const late = c.gaps.filter((g) => g.ms > c.backWithinMs);
  const byVia = (via: string) => c.gaps.filter((g) => g.via === via).map((g) => g.ms);
  const latencies = [...t.messages.values()]
    .filter((m) => m.status === "201" && m.deliveries.length > 0 && m.answeredAt !== undefined)
    .map((m) => Math.max(0, m.deliveries[0]!.at - m.answeredAt!));
  // the SDK acknowledges what it handled: a delivered message whose ack the node never confirmed is either acked in
  // Postgres all the same (the answer was lost with its socket, closed by its stopping node) or still pending there
  // (then it should have come again, and been acknowledged)
  const unconfirmed = [...t.messages.values()].filter((m) => m.deliveries.length > 0 && m.ackConfirmedAt === undefined);
  const pending = (m: MessageRecord) =>
    m.deliveries.some((d) => d.id !== undefined && pg.unacked.has(d.id.replace(/^msg_/, "")));
  const unacked = unconfirmed.filter(pending);
  const never = c.gaps.filter((g) => g.never);
  const errors = new Map<string, number>();
  for (const e of c.sdkErrors) errors.set(e, (errors.get(e) ?? 0) + 1);
  const gapLine = (via: string) => {
    const xs = byVia(via);
    return `${xs.length} (p50 ${s(quantile(xs, 0.5))}, p99 ${s(quantile(xs, 0.99))}, max ${s(quantile(xs, 1))})`;
  };
  const notes: [string, string][] = [
    ["clients", `${c.clients} (SDK agents: half WebSocket, half long poll)`],
    ["errors reaching an SDK caller", String(c.sdkErrors.length)],
    [
      "acks never confirmed",
      `${unconfirmed.length} (${unconfirmed.length - unacked.length} acked in Postgres, the answer lost with its socket; ${unacked.length} still pending)`,
    ],
    [
      "clients cut off",
      Object.entries(c.cuts)
        .map(([k, n]) => `${k} ${n}`)
        .join(", "),
    ],
    ["back receiving: WebSocket", gapLine("ws")],
    ["back receiving: long poll", gapLine("poll")],
    [
      "201 to first delivery",
      `p50 ${s(quantile(latencies, 0.5))}, p99 ${s(quantile(latencies, 0.99))}, max ${s(quantile(latencies, 1))}`,
    ],
  ];
  const failures = [...r.failures];
  const worst = [...r.worst];
  if (c.sdkErrors.length) {
    failures.push(`errors reached an SDK caller: ${c.sdkErrors.length}`);
    for (const [e, n] of [...errors].sort((a, b) => b[1] - a[1]).slice(0, 3)) worst.push(`SDK error ${n}×: ${e}`);
  }
  if (unacked.length) {
    failures.push(`delivered, and still pending in Postgres at the end: ${unacked.length}`);
    for (const m of unacked.slice(0, 3))
      worst.push(
        `pending: "${m.tag}" delivered ${m.deliveries.length}× (${m.deliveries.map((d) => d.via).join(", ")})`,
      );
  }
  if (never.length) failures.push(`clients never receiving again: ${never.length}`);
  if (late.length)
    failures.push(
      `clients not receiving again within ${s(c.backWithinMs)} of losing their node: ${late.length} (the slowest ${s(slowest)})`,
    );
  return {
    ...r,
    failures,
    worst,
    notes: [...(r.notes ?? []), ...notes],
    verdict: `every client receiving again within ${s(c.backWithinMs)} of losing its node (the slowest ${s(slowest)}); ${c.sdkErrors.length} SDK errors`,
  };
}

/** A line a node logged during the fault (its pino level, when it was JSON, and its msg or the raw line). */
export interface LogLine {
  node: string;
  level?: number;
  msg: string;
}

/** Judges one fault from what the tracker saw and the bodies Postgres holds (committed messages). */
export interface Durable {
  /** Bodies of this fault's messages that Postgres holds (committed, whatever the client was told). */
  committed: Set<string>;
  /** Ids (digits) of messages Postgres still counts as unacknowledged (past their stream's cursor). */
  unacked: Set<string>;
  /** When each committed body's (first) message was made (created_at, ms): which attempt committed it. */
  createdAt?: Map<string, number>;
  /** Bodies Postgres holds more than once, with how many rows. */
  copies?: Map<string, number>;
}

/** A record's attempts: those kept, or (made up by hand) the one from sentAt to answeredAt with its status. */
function attemptsOf(m: MessageRecord): Attempt[] {
  if (m.attempts.length > 0 || m.status === undefined) return m.attempts;
  return [{ startedAt: m.sentAt, endedAt: m.answeredAt ?? m.sentAt, status: m.status }];
}

/**
 * The attempt that made a committed message: the last one started by its created_at (a later one found it; an
 * earlier one had ended, or was refused). Without created_at, the first attempt.
 */
function committingAttempt(m: MessageRecord, createdAt: number | undefined): Attempt | undefined {
  const attempts = attemptsOf(m);
  if (createdAt === undefined) return attempts[0];
  let made: Attempt | undefined;
  for (const a of attempts) if (a.startedAt <= createdAt) made = a;
  return made ?? attempts[0];
}

/** The most hand-outs of one message id within any `windowMs`, per message (deliveries of one id, in time order). */
function mostInWindow(m: MessageRecord, windowMs: number): number {
  const byId = new Map<string, number[]>();
  for (const d of m.deliveries) {
    const k = d.id ?? "?";
    byId.set(k, [...(byId.get(k) ?? []), d.at]);
  }
  let most = 0;
  for (const ats of byId.values()) {
    ats.sort((a, b) => a - b);
    for (let i = 0, j = 0; j < ats.length; j++) {
      while (ats[j]! - ats[i]! >= windowMs) i++;
      most = Math.max(most, j - i + 1);
    }
  }
  return most;
}

export function judge(
  t: Tracker,
  fault: { description: string; strandsSends?: boolean; meetsAcks?: boolean; graceful?: boolean },
  phases: Phases,
  pg: Durable,
  logs?: LogLine[],
): FaultResult {
  const committed = pg.committed;
  const msgs = [...t.messages.values()];
  // when a committed message's own attempt ended (the answer that should have been its 201); else the final answer
  const madeBy = (m: MessageRecord) =>
    committed.has(m.tag) ? committingAttempt(m, pg.createdAt?.get(m.tag)) : undefined;
  const answered = (m: MessageRecord) => madeBy(m)?.endedAt ?? m.answeredAt ?? m.sentAt;
  const created = msgs.filter((m) => m.status === "201");
  const delivered = created.filter((m) => m.deliveries.length > 0);
  // never delivered, and not in Postgres either: the 201 promised something that is gone
  const lost = created.filter((m) => m.deliveries.length === 0 && !committed.has(m.tag));
  // committed, but not delivered within 10 s of its answer (late, or still waiting): a 201'd message, or one whose
  // sender got no answer because its node died between the commit and the publish (the commit came before
  // that failed answer, so the bound is, if anything, generous); the answer is that of the attempt that made it
  const stuck = msgs.filter((m) => {
    if (m.status !== "201" && !committed.has(m.tag)) return false;
    const first = m.deliveries[0]?.at;
    const deadline = answered(m) + STUCK_MS;
    return first === undefined ? committed.has(m.tag) : first > deadline;
  });
  const afterAck = msgs.reduce((n, m) => n + m.afterAck, 0);
  // acked (confirmed), yet Postgres still holds it as unacknowledged: the next read past the cursor hands it out
  // again, so this is a delivery after an ack waiting to happen
  const ackNotDurable = msgs.filter(
    (m) => m.ackConfirmedAt !== undefined && m.id !== undefined && pg.unacked.has(m.id.replace(/^msg_/, "")),
  ).length;
  const redelivered = msgs.filter((m) => m.deliveries.length > 1).length;
  const noCreated = msgs.filter((m) => m.status !== "201");
  const no201Delivered = noCreated.filter((m) => m.deliveries.length > 0).length;
  // committed by an attempt that got no 201 (its node died between the commit and the answer, or answered 503)
  const orphans = msgs.filter((m) => committed.has(m.tag) && madeBy(m)?.status !== "201");
  const no201Committed = orphans.length;
  const orphanLatencies = orphans.filter((m) => m.deliveries.length > 0).map((m) => m.deliveries[0]!.at - answered(m));
  const no201CommittedLatest = orphanLatencies.length > 0 ? Math.max(...orphanLatencies) / 1000 : null;
  // each must end with a 201 (a later attempt with its key) naming the one message that was delivered
  const idsOf = (m: MessageRecord) => new Set(m.deliveries.flatMap((d) => (d.id === undefined ? [] : [d.id])));
  const unresolved = orphans.filter(
    (m) => m.status !== "201" || (m.id !== undefined && idsOf(m).size > 0 && !idsOf(m).has(m.id)),
  );
  // stored twice (Postgres holds the body more than once), or delivered under two ids
  const duplicated = msgs.filter((m) => (pg.copies?.get(m.tag) ?? 1) > 1 || idsOf(m).size > 1);
  const retried = msgs.filter((m) => m.attempts.length > 1).length;
  // a 503 says "not stored" unless it says `"stored":"unknown"`: the attempt that made a committed message must not
  // have answered a plain 503
  const committed503 = msgs.filter((m) => {
    const a = madeBy(m);
    return a?.status === "503" && a.storedUnknown !== true;
  });
  const unknown503 = msgs.reduce(
    (n, m) => n + m.attempts.filter((a) => a.status === "503" && a.storedUnknown === true).length,
    0,
  );
  // refused acks: acknowledged within ACK_RECOVERY_MS of the backend's recovery (or of the refusal, if later)
  const refusedMsgs = msgs.filter((m) => m.ackRefusedAt !== undefined);
  const ackedInPg = (m: MessageRecord) => {
    const ids = [...idsOf(m), ...(m.id === undefined ? [] : [m.id])].map((id) => id.replace(/^msg_/, ""));
    return committed.has(m.tag) && ids.length > 0 && ids.every((id) => !pg.unacked.has(id));
  };
  const ackLatency = (m: MessageRecord) => Math.max(0, m.ackConfirmedAt! - Math.max(phases.endAt, m.ackRefusedAt!));
  const confirmed = refusedMsgs.filter((m) => m.ackConfirmedAt !== undefined);
  const unconfirmed = refusedMsgs.filter((m) => m.ackConfirmedAt === undefined && ackedInPg(m));
  const lateAcks = refusedMsgs.filter((m) =>
    m.ackConfirmedAt === undefined ? !ackedInPg(m) : ackLatency(m) > ACK_RECOVERY_MS,
  );
  const refusedAckSlowest = confirmed.length > 0 ? Math.max(...confirmed.map(ackLatency)) / 1000 : null;
  // hand-outs of one message to its receiver, over any REDELIVERY_WINDOW_MS
  const windowS = REDELIVERY_WINDOW_MS / 1000;
  const rateOf = (m: MessageRecord) => Math.max(0, mostInWindow(m, REDELIVERY_WINDOW_MS) - 1) / windowS;
  const rates = msgs.map((m) => ({ m, rate: rateOf(m) }));
  const redeliveryRate = rates.reduce((r, x) => Math.max(r, x.rate), 0);
  const hot = rates.filter((x) => x.rate > MAX_REDELIVERIES_PER_S);
  // HTTP requests reset (no answer) between the SIGTERM and the node's return
  const resetReqs = fault.graceful
    ? t.requests.filter(
        (r) =>
          HTTP_KINDS.has(r.kind) &&
          RESET_STATUSES.has(r.status) &&
          r.endedAt >= phases.injectAt &&
          r.startedAt <= phases.endAt,
      )
    : [];
  const replayed = msgs.filter((m) => m.attempts.at(-1)?.replayed === true).length;

  const after = created.filter((m) => m.sentAt >= phases.endAt && m.deliveries.length > 0);
  const firstBack = after.length > 0 ? Math.min(...after.map((m) => m.deliveries[0]!.at)) : undefined;
  const recoverSeconds = firstBack === undefined ? null : (firstBack - phases.endAt) / 1000;

  // statuses of requests under way at any moment from the injection to recovery (at least 2 s past the fault's end)
  const windowEnd = Math.max(firstBack ?? Date.now(), phases.endAt + 2_000);
  const hist = new Map<string, number>();
  for (const r of t.requests) {
    if (r.endedAt < phases.injectAt || r.startedAt > windowEnd) continue;
    const k = `${r.kind} ${r.status}`;
    hist.set(k, (hist.get(k) ?? 0) + 1);
  }
  const statuses = [...hist.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k}×${n}`)
    .join(", ");

  const is5xx = (s: string) => /^5\d\d$/.test(s) && s !== "503";
  // and the WebSocket's own: an `internal` error frame, a close for an internal error (1011), or a close saying a
  // valid token does not authenticate (4401: a backend's failure passed off as the client's)
  const wsBad = new Set(["ws-internal", "close-1011", "close-4401"]);
  const bad = t.requests.filter((r) => is5xx(r.status) || wsBad.has(r.status));
  const hangs = t.requests.filter((r) => r.status === "timeout" || r.endedAt - r.startedAt > r.allowanceMs + HANG_MS);

  const failures: string[] = [];
  if (lost.length) failures.push(`lost ${lost.length}`);
  if (afterAck) failures.push(`delivered again after ack ${afterAck}`);
  if (ackNotDurable)
    failures.push(`acked but not in Postgres ${ackNotDurable} (delivered again by the next read past the cursor)`);
  if (stuck.length) failures.push(`stuck ${stuck.length}`);
  if (duplicated.length)
    failures.push(`duplicates ${duplicated.length} (one send stored or delivered as more than one message)`);
  if (unresolved.length)
    failures.push(`committed without a 201, and no retry with its key got the 201 naming it: ${unresolved.length}`);
  if (bad.length) failures.push(`5xx other than 503: ${bad.length}`);
  if (hangs.length) failures.push(`hangs past 5 s: ${hangs.length}`);
  if (created.length === 0) failures.push("no send answered 201 at all");
  if (fault.meetsAcks) {
    const refused = (kind: string, status: string) => t.requests.some((r) => r.kind === kind && r.status === status);
    if (!refused("ack", "503")) failures.push("no long-poll ack met the fault (none answered 503)");
    if (!refused("ws-ack", "ws-unavailable"))
      failures.push("no WebSocket ack met the fault (none answered unavailable)");
  }
  if (committed503.length)
    failures.push(`503 but committed ${committed503.length} (answered 503 without "stored":"unknown", yet stored)`);
  if (lateAcks.length) {
    failures.push(
      `refused acks not acknowledged within ${ACK_RECOVERY_MS / 1000} s of recovery: ${lateAcks.length} of ${refusedMsgs.length}`,
    );
  }
  if (hot.length)
    failures.push(`handed out again more than ${MAX_REDELIVERIES_PER_S}/s: ${hot.length} messages (hot loop)`);
  if (resetReqs.length) failures.push(`requests reset during SIGTERM: ${resetReqs.length}`);
  if (logs && logs.length > LOG_LINE_BUDGET)
    failures.push(`node log lines ${logs.length} over the budget of ${LOG_LINE_BUDGET}`);
  if (fault.strandsSends && no201Committed === 0) {
    failures.push("no send was caught between its commit and its append (the position check was not exercised)");
  }

  const worst: string[] = [];
  const badKinds = new Map<string, number>();
  for (const r of bad) badKinds.set(`${r.kind} ${r.status}`, (badKinds.get(`${r.kind} ${r.status}`) ?? 0) + 1);
  for (const [k, n] of badKinds) worst.push(`5xx: ${k}×${n}`);
  const longest = hangs.reduce((m, r) => Math.max(m, r.endedAt - r.startedAt - r.allowanceMs), 0);
  if (hangs.length) worst.push(`longest hang: ${(longest / 1000).toFixed(1)} s past its allowance (${kinds(hangs)})`);
  if (duplicated.length) {
    const d = duplicated[0]!;
    worst.push(
      `duplicate: "${d.tag}" stored ${pg.copies?.get(d.tag) ?? 1}×, delivered as ${[...idsOf(d)].join(", ") || "nothing"}; attempts ${trail(d)}`,
    );
  }
  for (const m of unresolved.slice(0, 3)) {
    worst.push(
      `unresolved: "${m.tag}" attempts ${trail(m)}, answered ${m.id ?? "no id"}, delivered as ${[...idsOf(m)].join(", ") || "nothing"}`,
    );
  }
  for (const m of committed503.slice(0, 3)) worst.push(`503 but committed: "${m.tag}" attempts ${trail(m)}`);
  // the message handed out most often, when it comes near the limit: its hand-outs, by transport and time
  const most = rates.reduce<{ m: MessageRecord; rate: number } | undefined>(
    (a, x) => (a && a.rate >= x.rate ? a : x),
    undefined,
  );
  if (most && most.rate >= MAX_REDELIVERIES_PER_S / 2) {
    const t0 = most.m.deliveries[0]!.at;
    const ack =
      most.m.ackConfirmedAt === undefined
        ? "never confirmed"
        : `ack confirmed at +${((most.m.ackConfirmedAt - t0) / 1000).toFixed(2)} s`;
    worst.push(
      `most handed out: "${most.m.tag}" ${most.m.deliveries.length}× (${most.m.deliveries.map((d) => `${d.via} +${((d.at - t0) / 1000).toFixed(2)} s`).join(", ")}); ${ack}`,
    );
  }
  for (const m of lateAcks.slice(0, 3)) {
    const when =
      m.ackConfirmedAt === undefined
        ? "never acknowledged"
        : `acknowledged ${(ackLatency(m) / 1000).toFixed(1)} s after recovery`;
    worst.push(`refused ack: "${m.tag}" (via ${m.deliveries[0]?.via ?? "none"}) ${when}`);
  }
  if (hot.length) {
    const x = hot.reduce((a, b) => (b.rate > a.rate ? b : a));
    worst.push(`hot loop: "${x.m.tag}" handed out ${x.m.deliveries.length}×, ${x.rate.toFixed(1)}/s at its fastest`);
  }
  if (resetReqs.length) {
    const at = (ms: number) => `${ms >= phases.injectAt ? "+" : ""}${Math.round(ms - phases.injectAt)} ms`;
    const when = resetReqs
      .slice(0, 5)
      .map((r) => `${r.kind} ${at(r.startedAt)} to ${at(r.endedAt)}`)
      .join(", ");
    worst.push(
      `reset during SIGTERM: ${kinds(resetReqs)} (${[...new Set(resetReqs.map((r) => r.status))].join(", ")}; from the signal: ${when})`,
    );
  }
  if (logs && logs.length > 0) {
    const byMsg = new Map<string, number>();
    for (const l of logs)
      byMsg.set(`${l.node}: ${l.msg.slice(0, 80)}`, (byMsg.get(`${l.node}: ${l.msg.slice(0, 80)}`) ?? 0) + 1);
    const top = [...byMsg].sort((a, b) => b[1] - a[1]).slice(0, 3);
    worst.push(`log lines: ${top.map(([k, n]) => `${n}× ${k}`).join("; ")}`);
  }
  if (stuck.length) {
    const still = stuck.filter((m) => m.deliveries.length === 0).length;
    const bySender = new Map<string, number>();
    for (const m of stuck) {
      const who = `${/ (s\d+) /.exec(m.tag)?.[1] ?? "?"} via ${m.deliveries[0]?.via ?? "none"}`;
      bySender.set(who, (bySender.get(who) ?? 0) + 1);
    }
    const which = [...bySender].map(([k, n]) => `${k}×${n}`).join(", ");
    worst.push(
      `stuck: ${still} never delivered (committed in Postgres), ${stuck.length - still} delivered late (${which})`,
    );
  }

  return {
    name: t.fault,
    description: fault.description,
    sent: msgs.length,
    created: created.length,
    delivered: delivered.length,
    lost: lost.length,
    afterAck,
    ackNotDurable,
    stuck: stuck.length,
    duplicates: duplicated.length,
    retried,
    replayed,
    recoverSeconds,
    faultSeconds: (phases.endAt - phases.injectAt) / 1000,
    statuses,
    bad5xx: bad.length,
    hangs: hangs.length,
    redelivered,
    no201Delivered,
    no201Committed,
    no201Unresolved: unresolved.length,
    no201CommittedLatest,
    committed503: committed503.length,
    unknown503,
    refusedAcks: refusedMsgs.length,
    refusedAcksLate: lateAcks.length,
    refusedAcksUnconfirmed: unconfirmed.length,
    refusedAckSlowest,
    redeliveryRate,
    hotLoops: hot.length,
    resets: fault.graceful ? resetReqs.length : null,
    logLines: logs ? logs.length : null,
    failures,
    worst,
  };
}

/** The result of a fault the harness could not run. */
export function notRun(name: string, description: string, why: string): FaultResult {
  return {
    name,
    description,
    sent: 0,
    created: 0,
    delivered: 0,
    lost: 0,
    afterAck: 0,
    ackNotDurable: 0,
    stuck: 0,
    duplicates: 0,
    retried: 0,
    replayed: 0,
    recoverSeconds: null,
    faultSeconds: 0,
    statuses: "",
    bad5xx: 0,
    hangs: 0,
    redelivered: 0,
    no201Committed: 0,
    no201Unresolved: 0,
    no201CommittedLatest: null,
    no201Delivered: 0,
    committed503: 0,
    unknown503: 0,
    refusedAcks: 0,
    refusedAcksLate: 0,
    refusedAcksUnconfirmed: 0,
    refusedAckSlowest: null,
    redeliveryRate: 0,
    hotLoops: 0,
    resets: null,
    logLines: null,
    failures: [`did not run: ${why}`],
    worst: [],
  };
}

/** A send's attempts as "503 → ECONNREFUSED → 201 (replayed)". */
function trail(m: MessageRecord): string {
  return attemptsOf(m)
    .map((a) => `${a.status}${a.replayed ? " (replayed)" : ""}`)
    .join(" → ");
}

function kinds(rs: RequestRecord[]): string {
  const m = new Map<string, number>();
  for (const r of rs) m.set(r.kind, (m.get(r.kind) ?? 0) + 1);
  return [...m.entries()].map(([k, n]) => `${k}×${n}`).join(", ");
}
