// Reporting a principal, moment, comment or message (issue 53): one report per reporter and target, of what the
// reporter can see (404 otherwise). The use case is runtime/moderation/moderation.ts.
import { created, defineRoute, ok, type Route } from "../runtime/http/route.ts";
import { fileReport } from "../runtime/moderation/moderation.ts";
import { CreateReportRequest } from "../schema/moderation.ts";

const report = defineRoute({
  method: "POST",
  path: "/v1/reports",
  auth: "principal",
  scope: "social:write",
  body: CreateReportRequest,
  limit: "reports",
  async handle({ body, principal, svc }) {
    const { report, created: isNew } = await fileReport(svc, principal, body);
    // the same target reported again by the same reporter answers the first report (200), not a second one
    return isNew ? created({ report }) : ok({ report });
  },
});

export const reportRoutes: Route[] = [report];
