// One-time tickets in process (runtime/engines/tickets.ts): a map, expired entries dropped as they are met and on
// every put past a bound, so a node that issues many never holds them all.
import { packTicket, type TicketEngine, unpackTicket } from "../tickets.ts";

/** Entries held before a put sweeps the expired ones. */
const SWEEP_AT = 10_000;

export class MemoryTickets implements TicketEngine {
  private readonly held = new Map<string, string>();

  async put(ticket: string, value: string, expiresAtMs: number, nowMs: number): Promise<void> {
    if (this.held.size >= SWEEP_AT) {
      for (const [k, v] of this.held) if (unpackTicket(v, nowMs) === null) this.held.delete(k);
    }
    this.held.set(ticket, packTicket(value, expiresAtMs));
  }

  async take(ticket: string, nowMs: number): Promise<string | null> {
    const stored = this.held.get(ticket);
    if (stored === undefined) return null;
    this.held.delete(ticket);
    return unpackTicket(stored, nowMs);
  }
}
