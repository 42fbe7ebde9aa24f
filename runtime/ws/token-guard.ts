// What keeps a live connection's token honest, for WebSockets (runtime/ws/server.ts) and event streams
// (runtime/ws/event-streams.ts) alike. A rotated token, a deleted account or a suspension: every node re-checks the
// tokens of that principal's open sessions and closes those that no longer authenticate (4401; a suspension 4403), so
// a retired token stops working on live connections too. Expiring (human) tokens: a session is closed with 4401 once
// its token expires, even when it sends nothing (checked every second on the node's clock, so tests can move it).
import { WS_CLOSE } from "../../schema/ws.ts";
import { isOutage } from "../circuit.ts";
import { ApiError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { WsSession } from "./session.ts";

const EXPIRY_SWEEP_MS = 1000;

/** Guard `open` (the set itself, read as it changes) until the returned function is called. */
export function guardTokens(svc: Pick<Services, "auth" | "now">, open: ReadonlySet<WsSession>): () => void {
  let stopped = false;
  svc.auth.onForget((principalId) => {
    if (stopped) return;
    for (const s of open) {
      if (s.principal?.id !== principalId || !s.token) continue;
      svc.auth
        .resolve(s.token)
        .catch((err: unknown) =>
          isOutage(err)
            ? s.end(WS_CLOSE.unavailable, "cannot check the token now")
            : err instanceof ApiError && err.code === "suspended"
              ? s.end(WS_CLOSE.suspended, "account suspended")
              : s.end(WS_CLOSE.unauthorized, "token no longer valid"),
        );
    }
  });
  const sweep = setInterval(() => {
    const now = svc.now();
    for (const s of open) s.endIfExpired(now);
  }, EXPIRY_SWEEP_MS);
  sweep.unref();
  return () => {
    stopped = true;
    clearInterval(sweep);
  };
}
