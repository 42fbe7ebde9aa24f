// HTTP load through autocannon: a fixed number of connections for a fixed time, each request built fresh.
import autocannon from "autocannon";

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  errors: number;
}

export interface BuiltRequest {
  method: "GET" | "POST" | "DELETE" | "PATCH";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  url: string;
  connections: number;
  duration: number;
  /** Builds the next request; `i` counts requests on this connection's client. */
  next: () => BuiltRequest;
}

export async function load(opts: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.duration,
    pipelining: 1,
    requests: [
      {
        setupRequest: (req) => {
          const r = opts.next();
          return { ...req, method: r.method, path: r.path, headers: r.headers ?? {}, body: r.body };
        },
      },
    ],
  });
  const statuses: Record<string, number> = {};
  const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  for (const [code, s] of Object.entries(stats)) statuses[code] = s.count;
  return {
    requests: result.requests.total,
    rps: result.requests.total / opts.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    statuses,
    errors: result.errors + result.timeouts,
  };
}

/** The value at quantile `q` (0..1) of an ascending list; 0 when it is empty. */
export function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Percentiles of a list of latencies in ms. */
export function summarize(latencies: number[], seconds: number): Omit<LoadResult, "statuses" | "errors"> {
  const s = [...latencies].sort((a, b) => a - b);
  const pick = (q: number) => quantile(s, q);
  return {
    requests: s.length,
    rps: s.length / seconds,
    p50: pick(0.5),
    p90: pick(0.9),
    p99: pick(0.99),
    max: s.length ? s[s.length - 1]! : 0,
  };
}
