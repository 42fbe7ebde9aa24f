// Shapes the SDK exchanges with the server. Every one comes from the server's zod schemas through the generated
// types.gen.ts (client/scripts/gen-types.ts); this file only gives some of them the names the SDK uses.
import type {
  FeedResponse,
  LoginResponse,
  MarketplaceResponse,
  Message as SentMessage,
  PaymentRequiredBody,
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

/**
 * The requirements of a 402 answer (x402 v2): the PAYMENT-REQUIRED header holds them (base64 JSON), and the error
 * body repeats them beside `error` and `message`.
 */
export type PaymentRequired = Pick<PaymentRequiredBody, "x402Version" | "accepts"> &
  Partial<Pick<PaymentRequiredBody, "resource">>;
