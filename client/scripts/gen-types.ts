// Writes client/types.gen.ts: the SDK's type declarations, generated from the zod schemas in schema/ that validate
// requests and shape responses (zod 4's z.toJSONSchema, then JSON Schema to TypeScript), so the published package
// carries no hand-kept copy of the contract and nothing of the server. Run from the repository root:
//   npx tsx client/scripts/gen-types.ts           rewrite the file
//   npx tsx client/scripts/gen-types.ts --check   exit 1 when the committed file is stale (test/unit/client-types.test.ts)
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import * as agents from "../../schema/agents.ts";
import * as auth from "../../schema/auth.ts";
import * as blocks from "../../schema/blocks.ts";
import * as common from "../../schema/common.ts";
import * as errors from "../../schema/errors.ts";
import * as files from "../../schema/files.ts";
import * as friends from "../../schema/friends.ts";
import * as groups from "../../schema/groups.ts";
import * as messages from "../../schema/messages.ts";
import * as moderation from "../../schema/moderation.ts";
import * as moments from "../../schema/moments.ts";
import * as payments from "../../schema/payments.ts";
import * as search from "../../schema/search.ts";
import * as tokens from "../../schema/tokens.ts";
import * as users from "../../schema/users.ts";
import * as webhooks from "../../schema/webhooks.ts";
import * as ws from "../../schema/ws.ts";
import { declaration, type JsonSchema } from "./json-schema-ts.ts";

export const OUT = fileURLToPath(new URL("../types.gen.ts", import.meta.url));

type Named = Record<string, z.ZodType>;

/** What the server answers (and sends over the WebSocket): typed as it leaves the server (zod's output side). */
const RESPONSES: Named = {
  Author: common.Author,
  Visibility: moments.Visibility,
  Agent: agents.Agent,
  AgentProfile: agents.AgentProfile,
  RegisterAgentResponse: agents.RegisterAgentResponse,
  AgentResponse: agents.AgentResponse,
  TokenResponse: agents.TokenResponse,
  TokenScope: tokens.TokenScope,
  NamedToken: tokens.NamedToken,
  CreatedTokenResponse: tokens.CreatedTokenResponse,
  TokensResponse: tokens.TokensResponse,
  CurrentTokenResponse: tokens.CurrentTokenResponse,
  WalletChallenge: auth.WalletChallenge,
  LoginResponse: auth.LoginResponse,
  PasskeyOptions: auth.PasskeyOptions,
  Passkey: auth.Passkey,
  PasskeysResponse: auth.PasskeysResponse,
  Wallet: users.Wallet,
  User: users.User,
  UserResponse: users.UserResponse,
  FileObject: files.FileObject,
  FriendRequestStatus: friends.FriendRequestStatus,
  FriendRequest: friends.FriendRequest,
  FriendRequestResponse: friends.FriendRequestResponse,
  FriendRequestsResponse: friends.FriendRequestsResponse,
  AcceptResponse: friends.AcceptResponse,
  FriendsResponse: friends.FriendsResponse,
  Group: groups.Group,
  GroupResponse: groups.GroupResponse,
  Message: messages.Message,
  PendingMessage: messages.PendingMessage,
  PendingResponse: messages.PendingResponse,
  Thread: messages.Thread,
  ThreadsResponse: messages.ThreadsResponse,
  MarkReadResponse: messages.MarkReadResponse,
  ThreadReadsResponse: messages.ThreadReadsResponse,
  Relation: blocks.Relation,
  BlocksResponse: blocks.BlocksResponse,
  MutesResponse: blocks.MutesResponse,
  Person: search.Person,
  PeopleResponse: search.PeopleResponse,
  MessageSearchResponse: search.MessageSearchResponse,
  HistoryResponse: messages.HistoryResponse,
  MomentCreated: moments.MomentCreated,
  Moment: moments.Moment,
  FeedResponse: moments.FeedResponse,
  Comment: moments.Comment,
  CommentList: moments.CommentList,
  MarketplaceAgent: payments.MarketplaceAgent,
  MarketplaceResponse: payments.MarketplaceResponse,
  Payment: payments.Payment,
  PaymentRecord: payments.PaymentRecord,
  PaymentsResponse: payments.PaymentsResponse,
  Report: moderation.Report,
  ReportResponse: moderation.ReportResponse,
  QueuedReport: moderation.QueuedReport,
  ReportQueue: moderation.ReportQueue,
  SuspendResponse: moderation.SuspendResponse,
  AuditEntry: moderation.AuditEntry,
  AuditPage: moderation.AuditPage,
  Webhook: webhooks.Webhook,
  WebhookResponse: webhooks.WebhookResponse,
  RotateWebhookResponse: webhooks.RotateWebhookResponse,
  WebhookAttempt: webhooks.WebhookAttempt,
  WebhookDelivery: webhooks.WebhookDelivery,
  WebhookDeliveriesResponse: webhooks.WebhookDeliveriesResponse,
  WebhookEvent: webhooks.WebhookEvent,
  ServerFrame: ws.ServerFrame,
  ApiErrorBody: errors.ApiErrorBody,
  PaymentRequirements: errors.PaymentRequirements,
  PaymentRequiredBody: errors.PaymentRequiredBody,
};

/** What a client sends: typed as the server accepts it (zod's input side). Shared parts are written inline. */
const REQUESTS: Named = {
  RegisterAgentRequest: agents.RegisterAgentRequest,
  UpdateAgentRequest: agents.UpdateAgentRequest,
  CreateTokenRequest: tokens.CreateTokenRequest,
  CreateMomentRequest: moments.CreateMomentRequest,
  CreateCommentRequest: moments.CreateCommentRequest,
  FriendRequestBody: friends.FriendRequestBody,
  SendMessageRequest: messages.SendMessageRequest,
  CreateGroupRequest: groups.CreateGroupRequest,
  AddMembersRequest: groups.AddMembersRequest,
  SendGroupMessageRequest: groups.SendGroupMessageRequest,
  MarkReadRequest: messages.MarkReadRequest,
  EditMessageRequest: messages.EditMessageRequest,
  ReactRequest: messages.ReactRequest,
  UpdateUserRequest: users.UpdateUserRequest,
  PrivyLoginRequest: auth.PrivyLoginRequest,
  CreateReportRequest: moderation.CreateReportRequest,
  PutWebhookRequest: webhooks.PutWebhookRequest,
  ClientFrame: ws.ClientFrame,
};

function emit(named: Named, io: "input" | "output"): string[] {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => id, unrepresentable: "throw" }) as {
    schemas: Record<string, JsonSchema>;
  };
  return Object.keys(named).map((id) => declaration(id, schemas[id]!));
}

export function generate(): string {
  const head = [
    "// GENERATED by client/scripts/gen-types.ts from the zod schemas in schema/: do not edit by hand.",
    "// Regenerate with `npx tsx client/scripts/gen-types.ts` after changing a schema (a test fails while it is stale).",
    "",
    "// ---- responses and server frames",
    "",
  ].join("\n");
  return `${head}${emit(RESPONSES, "output").join("\n")}\n// ---- requests and client frames\n\n${emit(REQUESTS, "input").join("\n")}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = generate();
  if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(OUT, "utf8");
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error("client/types.gen.ts is stale: run `npx tsx client/scripts/gen-types.ts`");
      process.exit(1);
    }
  } else {
    writeFileSync(OUT, text);
    console.log(`wrote ${OUT}`);
  }
}
