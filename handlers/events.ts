// Server-Sent Events: GET /v1/events answers text/event-stream carrying the WebSocket's server frames, one event
// each (runtime/ws/event-streams.ts); acks go over HTTP (POST /v1/messages/{id}/ack). It authenticates with
// `Authorization: Bearer` or, for a browser's EventSource (which cannot set headers), a one-time ticket from
// POST /v1/events/ticket: the token itself never goes into a URL. A reconnect names the last event it saw in
// Last-Event-ID (or `?last_event_id=`); every message it did not acknowledge comes again (docs/ARCHITECTURE.md,
// "Server-Sent Events").
import { randomBytes } from "node:crypto";
import { insufficientScope, invalid, unauthorized } from "../runtime/errors.ts";
import { created, defineRoute, type Route } from "../runtime/http/route.ts";
import { parseId } from "../runtime/ids.ts";
import type { Services } from "../runtime/services.ts";
import { grants, type Principal } from "../runtime/auth.ts";
import { openTicket, sealTicket, ticketKey } from "../runtime/ws/ticket-seal.ts";
import { EventsQuery } from "../schema/events.ts";

const BEARER = /^Bearer +(\S+)\s*$/i;
/** What reading a principal's messages and events takes (as GET /v1/messages/pending). */
const SCOPE = "read";

/** The token and principal behind the request: its Authorization header, else its ticket (taken, once). */
async function credentials(
  svc: Services,
  header: string | undefined,
  ticket: string | undefined,
): Promise<{ token: string; principal: Principal }> {
  if (header !== undefined) {
    const principal = await svc.auth.authenticate(header);
    return { token: BEARER.exec(header)![1]!, principal };
  }
  if (ticket === undefined) throw unauthorized("a bearer token or a ticket (POST /v1/events/ticket) is required");
  const sealed = await svc.engines.tickets.take(ticketKey(ticket), svc.now());
  const token = sealed === null ? null : openTicket(ticket, sealed);
  if (token === null) throw unauthorized("unknown, used or expired ticket");
  return { token, principal: await svc.auth.resolve(token) };
}

const events = defineRoute({
  method: "GET",
  path: "/v1/events",
  // authenticated here rather than by the pipeline: a ticket stands for the header an EventSource cannot send
  auth: "none",
  noHead: true, // opening one starts a delivery: HEAD must not
  query: EventsQuery,
  async handle({ query, headers, svc }) {
    const resume = headers["last-event-id"] ?? query.last_event_id;
    if (resume !== undefined && resume !== "" && parseId("message", resume) === null) {
      throw invalid("Last-Event-ID is not an event id this stream gave (a message id)");
    }
    const { token, principal } = await credentials(svc, headers["authorization"], query.ticket);
    if (!grants(principal, SCOPE)) throw insufficientScope(SCOPE);
    const body = svc.events.start(principal, token, resume === "" ? undefined : resume);
    return {
      status: 200,
      headers: { "Cache-Control": "no-store", "X-Accel-Buffering": "no" },
      stream: { type: "text/event-stream; charset=utf-8", body },
    };
  },
});

const ticket = defineRoute({
  method: "POST",
  path: "/v1/events/ticket",
  auth: "principal",
  scope: SCOPE,
  limit: "event_tickets",
  async handle({ headers, svc }) {
    const token = BEARER.exec(headers["authorization"] ?? "")?.[1];
    if (token === undefined) throw unauthorized();
    const seconds = svc.config.FLOCK_SSE_TICKET_SECONDS;
    const name = randomBytes(24).toString("base64url");
    const now = svc.now();
    await svc.engines.tickets.put(ticketKey(name), sealTicket(name, token), now + seconds * 1000, now);
    return created({ ticket: name, expires_in: seconds });
  },
});

export const eventRoutes: Route[] = [events, ticket];
