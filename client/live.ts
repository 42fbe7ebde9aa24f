// The SDK's live connection: the WebSocket (ws.ts); when its upgrade is refused or dropped before it ever opened (a
// proxy that does not pass WebSockets), Server-Sent Events (sse.ts); when the server has no event stream either,
// long polling (receive.ts). Each yields the same messages, acknowledged the same way, so a loop over
// `flock.messages({ transport: "ws" })` never sees which one it is on.
import type { Flock } from "./index.ts";
import type { MessageStreamOptions } from "./receive.ts";
import { reconnectDelayMs } from "./retry.ts";
import type { Message } from "./types.ts";

/** Yields messages live; returns "poll" when only long polling is left. */
export async function* liveMessageStream(
  flock: Flock,
  opts: MessageStreamOptions,
): AsyncGenerator<Message, "poll" | undefined> {
  let unreachable = 0;
  while (!opts.signal?.aborted) {
    if (opts.transport !== "sse") {
      const { wsMessageStream } = await import("./ws.ts");
      if ((yield* wsMessageStream(flock, opts)) !== "refused") return undefined;
    }
    const { sseMessageStream } = await import("./sse.ts");
    const outcome = yield* sseMessageStream(flock, opts);
    if (outcome === undefined) return undefined;
    if (outcome === "unsupported") return "poll";
    // the server could not be reached at all (restarting, or the network): wait, then try the WebSocket again
    await flock.http.clock.sleep(reconnectDelayMs(unreachable++, Math.random), opts.signal).catch(() => {});
  }
  return undefined;
}
