// What a big fan-out costs everyone else on the same Redis: while a step runs, one PING every 5 ms on a connection
// of its own, and the round trips' quantiles. A script that runs long holds every other client (a rate limit, a
// direct send, another node) until it ends, which shows here as the tail. The probe runs in the bench's own process,
// so its round trips also hold that process's event-loop lag (small: it only publishes and gathers reports).
import { Redis } from "ioredis";
import { quantile } from "./load.ts";

export interface RedisProbe {
  /** Start pinging (again, with a fresh record). */
  start(): void;
  /** Stop and report round trips in ms. */
  stop(): Promise<{ n: number; p50: number; p99: number; p999: number; max: number }>;
  close(): void;
}

export function redisProbe(url: string): RedisProbe {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  let running: Promise<number[]> | undefined;
  let stopping = false;
  const loop = async () => {
    const lat: number[] = [];
    while (!stopping) {
      const t = performance.now();
      await redis.ping();
      lat.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
    return lat;
  };
  return {
    start() {
      stopping = false;
      running = loop();
    },
    async stop() {
      stopping = true;
      const lat = ((await running) ?? []).sort((a, b) => a - b);
      const q = (p: number) => Math.round(quantile(lat, p) * 100) / 100;
      return { n: lat.length, p50: q(0.5), p99: q(0.99), p999: q(0.999), max: q(1) };
    },
    close() {
      stopping = true;
      running?.catch(() => {}); // a ping cut short by the disconnect
      redis.disconnect();
    },
  };
}
