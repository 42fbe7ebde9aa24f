// The in-process registry of whoever waits for a principal's mail on this node: long polls and WebSocket
// connections. The node holds ONE subscription (the streams' message channel) whatever the
// number of waiters; a wake-up looks the principal up here and calls its waiters. O(1) Redis connections.

import { addTo, removeFrom } from "../set-map.ts";

/** Called with the raw id of the message that arrived, or null at shutdown. */
type Wake = (id: string | null) => void;

export class WaiterRegistry {
  private readonly byPrincipal = new Map<string, Set<Wake>>();
  private count = 0;

  /** Register a waiter; returns the function that removes it (safe to call twice). */
  add(principal: string, wake: Wake): () => void {
    addTo(this.byPrincipal, principal, wake);
    this.count++;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.count--;
      removeFrom(this.byPrincipal, principal, wake);
    };
  }

  /** Wake every waiter of a principal on this node; how many there were. */
  wake(principal: string, id: string | null): number {
    const set = this.byPrincipal.get(principal);
    if (!set) return 0;
    const woken = [...set];
    for (const w of woken) w(id);
    return woken.length;
  }

  /** Wake everyone (shutdown). */
  wakeAll(): void {
    for (const set of [...this.byPrincipal.values()]) for (const w of [...set]) w(null);
  }

  /** Waiters registered right now. */
  get size(): number {
    return this.count;
  }
}
