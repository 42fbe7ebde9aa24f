// What a bench scenario is and what it reports.
import type { LoadResult } from "./load.ts";

export interface BenchOptions {
  url: string;
  agents: number;
  duration: number;
  connections: number;
}

export interface ScenarioContext extends BenchOptions {
  wsUrl: string;
  progress(msg: string): void;
  /**
   * Restart Flock as a fresh process on the same database and Redis, updating `url` and `wsUrl` (only when
   * the bench started it): memory measurements then start from a heap no earlier load has grown.
   */
  freshNode?: () => Promise<void>;
}

export interface ScenarioResult extends LoadResult {
  /** Which baseline the ratio is taken against. */
  baseline: "http" | "ws";
  /** Unit of `rps` (requests, deliveries, ...). */
  unit: string;
  target: string;
  notes?: string;
  /** Memory figures the scenario read (idle: each idle node's RSS, MB). */
  memory?: Record<string, unknown>;
}

export interface Scenario {
  name: string;
  description: string;

  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}
