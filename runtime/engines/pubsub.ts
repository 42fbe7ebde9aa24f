// Pub/sub between nodes (cache invalidation, bans, wake-ups). One subscriber connection per node.

export type PubSubHandler = (payload: Buffer) => void;

export interface PubSub {
  publish(channel: string, payload: Buffer | string): Promise<void>;
  /** Subscribe a handler; returns an unsubscribe function. */
  subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>>;
}
