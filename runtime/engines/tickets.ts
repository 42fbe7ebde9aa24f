// One-time tickets (issue 55, Server-Sent Events): a short-lived random name standing for what it was issued for,
// taken at most once. A browser's EventSource cannot set an Authorization header, so it opens /v1/events with a
// ticket instead of a token (handlers/events.ts); the token never goes into a URL.
// Time is passed in, so the contract suite (test/tickets-engine.contract.ts) drives it by hand on both engines.

export interface TicketEngine {
  /** Keep `value` under `ticket` until `expiresAtMs` (the node's clock; `nowMs` is that clock now). */
  put(ticket: string, value: string, expiresAtMs: number, nowMs: number): Promise<void>;
  /** The value, removed in the same step: a second take of the same ticket, or one after it expired, is null. */
  take(ticket: string, nowMs: number): Promise<string | null>;
}

/** How a ticket's value is stored: its expiry first (so an engine whose own clock differs still honours the node's). */
export const packTicket = (value: string, expiresAtMs: number): string => `${expiresAtMs}:${value}`;

export function unpackTicket(stored: string | null, nowMs: number): string | null {
  if (stored === null) return null;
  const at = stored.indexOf(":");
  const expiresAt = Number(stored.slice(0, at));
  if (at < 0 || !Number.isFinite(expiresAt) || expiresAt <= nowMs) return null;
  return stored.slice(at + 1);
}
