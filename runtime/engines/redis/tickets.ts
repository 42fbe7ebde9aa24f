// One-time tickets in Redis (runtime/engines/tickets.ts): SET with PX, so Redis drops an unused one by itself, and
// GETDEL, so a ticket is taken once whichever node takes it (Redis 6.2 and later).
import { packTicket, type TicketEngine, unpackTicket } from "../tickets.ts";
import type { Keys } from "./keys.ts";
import type { ScriptedRedis } from "./scripts.ts";

export class RedisTickets implements TicketEngine {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: Keys,
  ) {}

  async put(ticket: string, value: string, expiresAtMs: number, nowMs: number): Promise<void> {
    const ttl = Math.max(1, Math.ceil(expiresAtMs - nowMs));
    await this.redis.set(this.keys.ticket(ticket), packTicket(value, expiresAtMs), "PX", ttl);
  }

  async take(ticket: string, nowMs: number): Promise<string | null> {
    return unpackTicket(await this.redis.getdel(this.keys.ticket(ticket)), nowMs);
  }
}
