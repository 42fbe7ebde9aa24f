// Server-Sent Events (GET /v1/events): the query an EventSource opens it with, and the one-time ticket it may
// authenticate with instead of a header it cannot set. The events themselves are the WebSocket's server frames
// (schema/ws.ts ServerFrame), one event each, named by the frame's type.
import { z } from "zod";

/** A ticket as issued: 32 URL-safe base64 characters (24 random bytes). */
const TICKET = /^[A-Za-z0-9_-]{32}$/;

export const EventsQuery = z.object({
  /** A one-time ticket from POST /v1/events/ticket, for a client that cannot send `Authorization` (EventSource). */
  ticket: z.string().min(1).max(128).optional(),
  /** The last event id seen, for clients that cannot set the Last-Event-ID header (EventSource polyfills). */
  last_event_id: z.string().max(64).optional(),
});

export const EventTicketResponse = z.object({
  ticket: z.string().regex(TICKET),
  /** Seconds it stays good; its first use takes it. */
  expires_in: z.number().int(),
});
