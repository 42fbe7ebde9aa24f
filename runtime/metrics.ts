// Prometheus metrics: request counts and latency histograms by route and status, plus process defaults.
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly latency: Histogram<"method" | "route" | "status">;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "flock_" });
    this.requests = new Counter({
      name: "flock_http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: "flock_http_request_duration_seconds",
      help: "HTTP request latency from first byte read to response written",
      labelNames: ["method", "route", "status"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
