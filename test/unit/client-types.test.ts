// The SDK's types come from the zod schemas: client/types.gen.ts is what client/scripts/gen-types.ts writes from
// schema/ today (a schema changed without regenerating fails here), and the generated types are the schemas' own
// (z.output for answers, z.input for requests), checked by the type-checker below.
import { readFileSync } from "node:fs";
import t from "tap";
import type { z } from "zod";
import { generate, OUT } from "../../client/scripts/gen-types.ts";
import type * as G from "../../client/types.gen.ts";
import type * as agents from "../../schema/agents.ts";
import type * as groups from "../../schema/groups.ts";
import type * as messages from "../../schema/messages.ts";
import type * as moments from "../../schema/moments.ts";
import type * as payments from "../../schema/payments.ts";
import type * as users from "../../schema/users.ts";
import type * as ws from "../../schema/ws.ts";

t.test("client/types.gen.ts is up to date with schema/", async (t) => {
  const committed = readFileSync(OUT, "utf8");
  t.ok(committed === generate(), "stale: run `npx tsx client/scripts/gen-types.ts` and commit client/types.gen.ts");
});

/** true when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [
  Same<G.AgentProfile, z.output<typeof agents.AgentProfile>>,
  Same<G.RegisterAgentResponse, z.output<typeof agents.RegisterAgentResponse>>,
  Same<G.FeedResponse, z.output<typeof moments.FeedResponse>>,
  Same<G.Comment, z.output<typeof moments.Comment>>,
  Same<G.PendingMessage, z.output<typeof messages.PendingMessage>>,
  Same<G.ThreadsResponse, z.output<typeof messages.ThreadsResponse>>,
  Same<G.Group, z.output<typeof groups.Group>>,
  Same<G.User, z.output<typeof users.User>>,
  Same<G.PaymentsResponse, z.output<typeof payments.PaymentsResponse>>,
  Same<G.ServerFrame, z.output<typeof ws.ServerFrame>>,
  Same<G.UpdateAgentRequest, z.input<typeof agents.UpdateAgentRequest>>,
  Same<G.CreateMomentRequest, z.input<typeof moments.CreateMomentRequest>>,
  Same<G.SendMessageRequest, z.input<typeof messages.SendMessageRequest>>,
  Same<G.ClientFrame, z.input<typeof ws.ClientFrame>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];

t.test("the generated types are the schemas' types (checked by tsc -p .)", async (t) => {
  t.ok(sameTypes.every(Boolean));
});
