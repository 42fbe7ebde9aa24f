// Topics for connections that are not uWS WebSockets (the Server-Sent Events streams, runtime/ws/event-streams.ts): a
// stream's frames published to a uWS topic reach only WebSockets, so the node's publisher (runtime/ws/server.ts)
// hands each frame to these subscribers too, when there are any. The topic names are Channels' (topicOf), so a
// stream taken live by an event stream and a WebSocket is published once, and each frame built once, for both.

/** A connection taking topics' frames (its own send enforces its buffer bound). */
export interface TopicSubscriber {
  send(data: string | Uint8Array, isBinary?: boolean): number;
}

export class LocalTopics {
  private readonly byTopic = new Map<string, Set<TopicSubscriber>>();

  /** Topics with a subscriber: 0, and a publish costs one comparison. */
  get size(): number {
    return this.byTopic.size;
  }

  subscribe(topic: string, s: TopicSubscriber): boolean {
    let set = this.byTopic.get(topic);
    if (set === undefined) {
      set = new Set();
      this.byTopic.set(topic, set);
    }
    if (set.has(s)) return false;
    set.add(s);
    return true;
  }

  unsubscribe(topic: string, s: TopicSubscriber): boolean {
    const set = this.byTopic.get(topic);
    if (set === undefined || !set.delete(s)) return false;
    if (set.size === 0) this.byTopic.delete(topic);
    return true;
  }

  /** One frame to every subscriber of `topic`, in the order they subscribed. */
  publish(topic: string, data: string | Uint8Array, binary: boolean): void {
    const set = this.byTopic.get(topic);
    if (set === undefined) return;
    for (const s of set) s.send(data, binary);
  }
}
