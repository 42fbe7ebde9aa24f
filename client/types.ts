// Shapes the SDK exchanges with the server, taken from the server's zod schemas (types only: nothing of the
// server is loaded at run time).
import type { z } from "zod";
import type { Agent } from "../schema/agents.ts";
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
export type Message = SentMessage & { delivery_count?: number; payment?: Payment };
/** A message handed out by pending or the WebSocket, with how many times it has been delivered. */
export type Delivered = z.infer<typeof PendingMessage>;

export interface Payment {
  transaction: string;
  network: string;
  payer: string;
  amount: string;
  explorer_url?: string;
}

export interface MarketplaceAgent {
  id: string;
  display_name: string;
  description: string;
  price: number;
  currency: string;
  network: string;
  asset: string;
  asset_symbol: string;
}

export interface MarketplacePage {
  agents: MarketplaceAgent[];
  has_more: boolean;
}
