// One structured log line per change of a Redis connection's state, instead of ioredis's "[ioredis] Unhandled
// error event" stack trace on stderr for every failed reconnect (about 170 per outage): an `error` listener
// silences those, and the line is written only when the state moves between up and down.
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "../../log.ts";

type ConnectionState = "connecting" | "up" | "down";

interface WatchedConnection {
  state(): ConnectionState;
  /** Closing on purpose: nothing more is logged. */
  quiet(): void;
}

export function watchConnection(redis: Redis | Cluster, name: string, log: Logger | undefined): WatchedConnection {
  let state: ConnectionState = "connecting";
  let quiet = false;
  let lastError: string | undefined;
  let failures = 0;
  const move = (next: ConnectionState) => {
    if (next === state) return;
    const was = state;
    state = next;
    if (quiet) return;
    if (next === "up") {
      if (was === "down") log?.info({ redis: name, failedAttempts: failures }, "redis connection restored");
      failures = 0;
      lastError = undefined;
    } else if (next === "down") {
      log?.warn({ redis: name, error: lastError }, "redis connection lost; reconnecting");
    }
  };
  redis.on("error", (err: Error) => {
    failures++;
    lastError = err.message || err.name;
    if (state === "up") move("down");
  });
  redis.on("ready", () => move("up"));
  redis.on("close", () => {
    if (state === "up") move("down");
  });
  return {
    state: () => state,
    quiet: () => {
      quiet = true;
    },
  };
}
