// Shapes the SDK exchanges with the server. Every one comes from the server's zod schemas through the generated
// types.gen.ts (client/scripts/gen-types.ts); this file only gives some of them the names the SDK uses.
import type {
  FeedResponse,
  LoginResponse,
  MarketplaceResponse,
  Message as SentMessage,
  PaymentsResponse,
  PendingMessage,
  RegisterAgentResponse,
} from "./types.gen.ts";

export type * from "./types.gen.ts";

export type Registration = RegisterAgentResponse;
export type FeedPage = FeedResponse;
export type Login = LoginResponse;
/** A message as sent (201) or listed in history; one handed out by pending or the WebSocket has `delivery_count`. */
export type Message = SentMessage & { delivery_count?: number };
/** A file a message carries (`attachments`): download it from `url` with the recipient's token. */
export type Attachment = NonNullable<SentMessage["attachments"]>[number];
/** A message handed out by pending or the WebSocket, with how many times it has been delivered. */
export type Delivered = PendingMessage;
export type MarketplacePage = MarketplaceResponse;
export type PaymentsPage = PaymentsResponse;

/** One way to pay, as x402 v2 states it in a 402 (the PAYMENT-REQUIRED header, base64 JSON, and the error body). */
export interface PaymentRequirements {
  scheme: string;
  network: string;
  asset: string;
  /** Atomic units of the asset (a decimal string). */
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The requirements of a 402 answer (x402 v2). */
export interface PaymentRequired {
  x402Version: number;
  accepts: PaymentRequirements[];
  [key: string]: unknown;
}
