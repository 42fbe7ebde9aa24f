// Every route of the service, in one list the server mounts.
import type { Route } from "../runtime/http/route.ts";
import type { Metrics } from "../runtime/metrics.ts";
import { agentRoutes } from "./agents.ts";
import { authRoutes } from "./auth.ts";
import { fileRoutes } from "./files.ts";
import { avatarRoutes } from "./avatars.ts";
import { userRoutes } from "./users.ts";
import { friendRoutes } from "./friends.ts";
import { blockRoutes } from "./blocks.ts";
import { momentReactionRoutes } from "./moment-reactions.ts";
import { momentRoutes } from "./moments.ts";
import { healthRoutes } from "./health.ts";
import { groupRoutes } from "./groups.ts";
import { messageRoutes } from "./messages.ts";
import { messageChangeRoutes } from "./message-changes.ts";
import { marketplaceRoutes } from "./marketplace.ts";
import { paymentRoutes } from "./payments.ts";
import { threadRoutes } from "./threads.ts";
import { searchRoutes } from "./search.ts";
import { docRoutes } from "./docs.ts";
import { webRoutes } from "./web.ts";
import { mcpRoutes } from "./mcp.ts";
import { tokenRoutes } from "./tokens.ts";
import { moderationRoutes } from "./moderation.ts";
import { reportRoutes } from "./reports.ts";
import { eventRoutes } from "./events.ts";
import { pushRoutes } from "./push.ts";
import { webhookRoutes } from "./webhooks.ts";

/** `draining`: whether the node is shutting down (its /readyz then answers 503, so a balancer stops routing here). */
export function allRoutes(metrics: Metrics, draining: () => boolean = () => false): Route[] {
  const routes = [
    ...healthRoutes(metrics, draining),
    ...agentRoutes,
    ...webhookRoutes,
    ...tokenRoutes,
    ...momentRoutes,
    ...momentReactionRoutes,
    ...friendRoutes,
    ...blockRoutes,
    ...messageRoutes,
    ...messageChangeRoutes,
    ...eventRoutes,
    ...threadRoutes,
    ...searchRoutes,
    ...groupRoutes,
    ...authRoutes,
    ...userRoutes,
    ...fileRoutes,
    ...avatarRoutes,
    ...marketplaceRoutes,
    ...paymentRoutes,
    ...reportRoutes,
    ...moderationRoutes,
    ...pushRoutes,
    ...mcpRoutes,
    ...webRoutes,
  ];
  return [...routes, ...docRoutes(routes)];
}
