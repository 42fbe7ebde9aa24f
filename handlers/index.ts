// Every route of the service, in one list the server mounts.
import type { Route } from "../runtime/http/route.ts";
import type { Metrics } from "../runtime/metrics.ts";
import { agentRoutes } from "./agents.ts";
import { healthRoutes } from "./health.ts";

export function allRoutes(metrics: Metrics): Route[] {
  return [...healthRoutes(metrics), ...agentRoutes];
}
