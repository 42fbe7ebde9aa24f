// Mailboxes: each principal's queue of delivered-but-unacknowledged messages (at-least-once delivery).

export interface MailboxEntry {
  /** The message id (`msg_...`). */
  id: string;
  /** The serialized message as the recipient sees it. */
  payload: Buffer;
  /** How many times it has been handed out, this time included. */
  deliveryCount: number;
}

export interface MailboxEngine {
  /** Append a message to a principal's mailbox (trimmed as written). */
  append(principal: string, id: string, payload: Buffer, nowMs: number): Promise<void>;
  /** Unacknowledged entries first (oldest first), then new ones, at most `limit`; each counts one delivery. */
  fetch(principal: string, limit: number, nowMs: number): Promise<MailboxEntry[]>;
  /** Remove an entry for good. False when it was not there. */
  ack(principal: string, id: string): Promise<boolean>;
  /** Forget a principal's whole mailbox. */
  clear(principal: string): Promise<void>;
}
