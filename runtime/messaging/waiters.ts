// The in-process registry of whoever waits on this node for a message in a stream (an inbox, a group): long polls, and
// MCP sessions waiting on their inbox (WebSockets take streams live through Channels instead). The node holds ONE
// subscription (the streams' message channel) whatever the number of waiters; a message that arrives wakes the
// waiters of its stream here. O(1) Redis connections.

import { addTo, removeFrom } from "../set-map.ts";
import type { StreamId } from "./stream-id.ts";

/** Called with the raw id of the message that arrived, or null at shutdown. */
type Wake = (id: string | null) => void;

export class WaiterRegistry {
  private readonly byStream = new Map<StreamId, Set<Wake>>();
  private count = 0;

  /** Register a waiter on `stream`; returns the function that removes it (safe to call twice). */
  add(stream: StreamId, wake: Wake): () => void {
    addTo(this.byStream, stream, wake);
    this.count++;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.count--;
      removeFrom(this.byStream, stream, wake);
    };
  }

  /** Wake every waiter of a stream on this node; how many there were. */
  wake(stream: StreamId, id: string | null): number {
    const set = this.byStream.get(stream);
    if (!set) return 0;
    const woken = [...set];
    for (const w of woken) w(id);
    return woken.length;
  }

  /** Wake everyone (shutdown). */
  wakeAll(): void {
    for (const set of [...this.byStream.values()]) for (const w of [...set]) w(null);
  }

  /** Waiters registered right now. */
  get size(): number {
    return this.count;
  }
}
