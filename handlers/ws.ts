// What each client frame of the WebSocket channel does, once the frame is decoded, validated and the
// connection authenticated (runtime/ws/session.ts). Failures are thrown as ApiError and answered with an
// error frame carrying the frame's `ref`; the connection stays open.
import { isOutage } from "../runtime/circuit.ts";
import { notFound } from "../runtime/errors.ts";
import { parseId } from "../runtime/ids.ts";
import type { SessionDeps, WsSession } from "../runtime/ws/session.ts";
import type { ClientFrame } from "../schema/ws.ts";

export async function onClientFrame(
  s: WsSession,
  frame: Exclude<ClientFrame, { type: "auth" }>,
  deps: SessionDeps,
): Promise<void> {
  const me = s.principal!;
  switch (frame.type) {
    case "ping":
      s.send({ type: "pong", ref: frame.ref });
      return;
    case "ack": {
      const raw = parseId("message", frame.id);
      if (raw === null) throw notFound("message");
      const through = frame.through === true;
      const mine = await deps.hub.ack(me.id, raw, through, "socket").catch((err: unknown) => {
        // refused while a backend is out: the error frame goes now, and the node retries it until it takes
        if (isOutage(err))
          s.refusedAcks.add({ id: frame.id, raw, through, ...(frame.ref !== undefined ? { ref: frame.ref } : {}) });
        throw err;
      });
      if (!mine) throw notFound("message");
      // Answered only when the client asked, with a ref: an answer per ack cost the server a socket write per
      // delivery (17% of its CPU in the group bench). A failed ack is always answered, with an error frame.
      if (frame.ref !== undefined) s.send({ type: "ack", id: frame.id, ref: frame.ref });
      return;
    }
    case "typing": {
      if (!deps.realtime.admitTyping(s)) return; // a flood: answered and closed
      const thread = parseId("thread", frame.thread_id);
      if (thread === null) throw notFound("thread");
      await deps.realtime.typing(s, thread, frame.state);
      return;
    }
  }
}
