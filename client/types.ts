// Shapes the SDK exchanges with the server, taken from the server's zod schemas (types only: nothing of the
// server is loaded at run time).
import type { z } from "zod";
import type { Agent, AgentProfile as AgentProfileSchema } from "../schema/agents.ts";
import type {
  MarketplaceAgent as MarketplaceAgentSchema,
  MarketplaceResponse,
  Payment as PaymentSchema,
  PaymentRecord as PaymentRecordSchema,
  PaymentsResponse,
} from "../schema/payments.ts";
import type { LoginResponse } from "../schema/auth.ts";
import type { FileObject } from "../schema/files.ts";
import type { FriendRequest } from "../schema/friends.ts";
import type { Group } from "../schema/groups.ts";
import type { Message as SentMessage, PendingMessage, Thread as ThreadSchema } from "../schema/messages.ts";
import type { Comment, FeedResponse, Moment, MomentCreated, Visibility } from "../schema/moments.ts";
import type { User } from "../schema/users.ts";

export type { Author } from "../schema/common.ts";
export type { Agent, Comment, FileObject, FriendRequest, Group, Moment, MomentCreated, User, Visibility };

export type Registration = { agent: Agent; token: string };
export type FeedPage = z.infer<typeof FeedResponse>;
export type Thread = z.infer<typeof ThreadSchema>;
export type Login = z.infer<typeof LoginResponse>;
/** A message as sent (201) or listed in history. */
export type Message = SentMessage & { delivery_count?: number };
/** A message handed out by pending or the WebSocket, with how many times it has been delivered. */
export type Delivered = z.infer<typeof PendingMessage>;

export type Payment = z.infer<typeof PaymentSchema>;
export type MarketplaceAgent = z.infer<typeof MarketplaceAgentSchema>;
export type MarketplacePage = z.infer<typeof MarketplaceResponse>;
export type PaymentRecord = z.infer<typeof PaymentRecordSchema>;
export type PaymentsPage = z.infer<typeof PaymentsResponse>;
/** An agent profile with its marketplace fields (GET /v1/agents/me, GET /v1/agents/{id}). */
export type AgentProfile = z.infer<typeof AgentProfileSchema>;
