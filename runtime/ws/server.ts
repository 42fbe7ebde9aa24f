// The uWS adapter for /v1/ws: the upgrade (credentials from the Authorization header or a bearer.<token>
// subprotocol, checked before upgrading; otherwise an auth frame comes first), the encoding, and the
// socket events handed to sessions. Must be mounted before the HTTP catch-all route.
import { randomBytes } from "node:crypto";
import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket } from "uWebSockets.js";
import type { Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import { outageOf, unavailable } from "../circuit.ts";
import { clientIp } from "../http/client-ip.ts";
import { originAllowed } from "../http/cors.ts";
import { write } from "../http/respond.ts";
import { WS_CLOSE } from "../../schema/ws.ts";
import type { Services } from "../services.ts";
import type { Codec } from "./codec.ts";
import { negotiate } from "./negotiate.ts";
import { guardTokens } from "./token-guard.ts";
import { type FrameHandler, HEARTBEAT_SECONDS, MAX_BUFFER, MAX_FRAME, WsSession } from "./session.ts";

/** What a socket carries from its upgrade to its open (then its session), the only per-socket object besides it. */
interface UserData {
  principal: Principal | null;
  token: string | null;
  codec: Codec;
  /** Set by the open event (undefined until then: declared from the start, so every user data has one shape). */
  session: WsSession | undefined;
}

interface WsHandle {
  /** Stop taking connections and close every socket (1001). The hub and presence are startNode's to stop. */
  shutdown(): void;
}

/**
 * uWS's own bound on a client message. Above it uWS drops the connection without a close frame, so it sits well
 * above MAX_FRAME, which the session enforces with a 1009 close; it also bounds what one socket may make uWS buffer.
 */
const UWS_MAX_PAYLOAD = 16 * MAX_FRAME;

const connBase = randomBytes(4).toString("hex");

/** An upgrade refused: the error as JSON, the connection closed. */
function refuse(res: HttpResponse, err: ApiError): void {
  write(res, {
    status: err.status,
    headers: { ...err.headers, "Content-Type": "application/json" },
    body: JSON.stringify(err.body()),
    close: true,
  });
}

/** The open event's follow-up, right after it (WsSession.open says why not inside it). */
const openSession = (session: WsSession, principal: Principal | null) => session.open(principal);
let connSeq = 0;

export function mountWs(app: TemplatedApp, svc: Services, onFrame: FrameHandler): WsHandle {
  const deps = { svc, hub: svc.hub, realtime: svc.realtime, onFrame };
  const open = new Set<WsSession>();
  let draining = false;
  // a stream's frames go to its uWS topic, and to the event streams taking it (runtime/ws/local-topics.ts) when any do
  const local = svc.events.topics;
  svc.hub.streams.channels.attach({
    publish: (topic, data, binary) => {
      app.publish(topic, data, binary);
      if (local.size > 0) local.publish(topic, data, binary);
    },
  });
  // uWS fills (a topic's publish too) and drains the buffers in C++, with no event per byte, so no running count can
  // follow them: the open sockets are asked when /metrics is scraped (0.3 ms a scrape with 8,000 open, measured)
  svc.metrics.watchQueues({
    websocketBuffered: () => {
      let bytes = 0;
      for (const s of open) bytes += s.buffered;
      return bytes;
    },
  });

  app.ws<UserData>("/v1/ws", {
    maxPayloadLength: UWS_MAX_PAYLOAD,
    idleTimeout: HEARTBEAT_SECONDS,
    sendPingsAutomatically: true,
    maxBackpressure: 2 * MAX_BUFFER,
    // a group's messages are published to topics (runtime/messaging/channels.ts): a socket that cannot take one is
    // closed rather than skipped, since a hole would let a cumulative ack acknowledge what it never got
    closeOnBackpressureLimit: true,
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      const key = req.getHeader("sec-websocket-key");
      const protocols = req.getHeader("sec-websocket-protocol");
      const extensions = req.getHeader("sec-websocket-extensions");
      const forwarded = req.getHeader("x-forwarded-for");
      const origin = req.getHeader("origin");
      const nego = negotiate(req.getHeader("authorization"), protocols);
      const upgradeNow = (principal: Principal | null) =>
        res.upgrade<UserData>(
          { principal, token: nego.token, codec: nego.codec, session: undefined },
          key,
          nego.selected,
          extensions,
          context,
        );
      if (draining) {
        refuse(res, new ApiError("unavailable", "shutting down"));
        return;
      }
      // A browser page from an origin not on FLOCK_CORS_ORIGINS (clients outside browsers send no Origin).
      if (!originAllowed(svc.config.FLOCK_CORS_ORIGINS, origin === "" ? undefined : origin)) {
        refuse(res, new ApiError("forbidden", "this origin may not open a WebSocket here (FLOCK_CORS_ORIGINS)"));
        return;
      }
      try {
        svc.limiter.checkBan(clientIp(res, forwarded, svc.config.TRUST_PROXY));
      } catch (err) {
        refuse(res, err as ApiError);
        return;
      }
      // A token this node has cached is checked without waiting, so most upgrades happen here, inside the handler,
      // uncorked, with nothing more made for them.
      if (nego.token === null) {
        upgradeNow(null);
        return;
      }
      const known = svc.auth.cached(nego.token);
      if (known) {
        upgradeNow(known);
        return;
      }
      // After an await the upgrade must be corked; uWS 20.30's cork can then close the fresh socket at once (1006,
      // about one connect in a thousand under load; fixed upstream in uNetworking/uWebSockets#1929).
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      svc.auth.resolve(nego.token).then(
        (principal) => {
          if (!aborted) res.cork(() => upgradeNow(principal));
        },
        (err: unknown) => {
          if (aborted) return;
          const out = outageOf(err);
          refuse(
            res,
            err instanceof ApiError ? err : out ? unavailable(out) : new ApiError("unauthorized", "invalid token"),
          );
        },
      );
    },
    open: (ws: WebSocket<UserData>) => {
      const data = ws.getUserData();
      const id = `${connBase}-${(++connSeq).toString(36)}`;
      // the session's child logger is made when it first logs (most sockets never do)
      const session = new WsSession(id, ws, data.codec, deps, svc.log);
      data.session = session;
      session.token = data.token;
      open.add(session);
      svc.metrics.connections.websocket.inc();
      setImmediate(openSession, session, data.principal);
    },
    message: (ws: WebSocket<UserData>, message: ArrayBuffer) => {
      const data = ws.getUserData();
      data.session?.onMessage(message, data.principal);
    },
    drain: (ws: WebSocket<UserData>) => {
      ws.getUserData().session?.onDrain();
    },
    close: (ws: WebSocket<UserData>) => {
      const session = ws.getUserData().session;
      if (!session) return;
      open.delete(session);
      svc.metrics.connections.websocket.dec();
      void session.onClose();
    },
  });

  // retired and expired tokens close their sockets (runtime/ws/token-guard.ts)
  const unguard = guardTokens(svc, open);

  return {
    shutdown() {
      unguard();
      draining = true;
      for (const s of [...open]) s.end(WS_CLOSE.goingAway, "server shutting down");
    },
  };
}
