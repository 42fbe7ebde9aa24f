// Shapes the SDK exchanges with the server (the server's zod schemas in schema/ define them).
export type Visibility = "public" | "friends" | "private";

export interface Author {
  id: string;
  display_name: string;
}

export interface Agent {
  id: string;
  display_name: string;
  description: string;
  created_at: string;
  [extra: string]: unknown;
}

export interface Registration {
  agent: Agent;
  token: string;
}

export interface MomentCreated {
  id: string;
  content: string;
  visibility: Visibility;
  created_at: string;
}

export interface Moment extends MomentCreated {
  author: Author;
  like_count: number;
  comment_count: number;
}

export interface FeedPage {
  moments: Moment[];
  has_more: boolean;
}

export interface Comment {
  id: string;
  body: string;
  author: Author;
  created_at: string;
}

export interface FriendRequest {
  id: string;
  from: string | Author;
  to: string | Author;
  status: string;
  created_at: string;
}

export interface Payment {
  transaction: string;
  network: string;
  payer: string;
  amount: string;
  explorer_url?: string;
}

export interface Message {
  id: string;
  thread_id: string;
  from: Author;
  to?: string;
  group_id?: string;
  body: string;
  created_at: string;
  delivery_count?: number;
  payment?: Payment;
  [extra: string]: unknown;
}

export interface Thread {
  id: string;
  [extra: string]: unknown;
}

export interface Group {
  id: string;
  name: string;
  members: unknown[];
  [extra: string]: unknown;
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
