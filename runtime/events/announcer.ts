// The one publisher of what a node tells every node's WebSocket connections: presence, typing, read markers, friend
// requests, friendships, moments published and moments' counts. The layers below runtime/ws/ (handlers, account
// deletion, use cases) and the WebSocket's own presence and typing call it after the change they name is committed;
// it publishes on the typed node-to-node channels (runtime/engines/node-channels.ts), so the wire is theirs. Every
// node's relays (runtime/ws/realtime.ts and the files it composes) hear each event and hand it to the local
// connections it concerns. A rejected publish means
// the backend refused it: the caller logs it, and the change still stands (a connection sees it at its next connect).
import { CHANNELS, type ChannelMessage, publish } from "../engines/node-channels.ts";
import type { PubSub } from "../engines/pubsub.ts";

/** A principal's first connection opened, or its last one closed: its friends' connections hear it. */
export type PresenceChanged = ChannelMessage<typeof CHANNELS.presence>;
/** A principal started or stopped typing in a thread: the connections of `to` (the other members) hear it. */
export type TypingChanged = ChannelMessage<typeof CHANNELS.typing>;
/** A principal marked a thread read: the connections of `to` hear it. */
export type ThreadRead = ChannelMessage<typeof CHANNELS.read>;
/** A friend request was made: the recipient's connections hear it. */
export type FriendRequestMade = ChannelMessage<typeof CHANNELS.friendRequest>;
/**
 * The friendship of two principals was made or ended. It says only which pair changed: a node with connections of
 * either side reads what the pair is now, names included.
 */
export type FriendshipChanged = ChannelMessage<typeof CHANNELS.friendship>;

/** A moment was published: the sessions that may see it, on every node, hear it. */
export type MomentPublished = ChannelMessage<typeof CHANNELS.moment>;
/** A moment's like or comment counts changed: the sessions that may see it, on every node, hear the new counts. */
export type MomentCountsChanged = ChannelMessage<typeof CHANNELS.momentCounts>;

/** Tells every node's connections about one event; each method names the event it publishes. */
export interface Announcer {
  presence(e: PresenceChanged): Promise<void>;
  typing(e: TypingChanged): Promise<void>;
  read(e: ThreadRead): Promise<void>;
  friendRequest(e: FriendRequestMade): Promise<void>;
  friendship(e: FriendshipChanged): Promise<void>;
  moment(e: MomentPublished): Promise<void>;
  momentCounts(e: MomentCountsChanged): Promise<void>;
}

/** The announcer of a node: each event on its channel of the node-to-node pub/sub. */
export class NodeAnnouncer implements Announcer {
  constructor(private readonly pubsub: PubSub) {}

  presence(e: PresenceChanged): Promise<void> {
    return publish(this.pubsub, CHANNELS.presence, e);
  }

  typing(e: TypingChanged): Promise<void> {
    return publish(this.pubsub, CHANNELS.typing, e);
  }

  read(e: ThreadRead): Promise<void> {
    return publish(this.pubsub, CHANNELS.read, e);
  }

  friendRequest(e: FriendRequestMade): Promise<void> {
    return publish(this.pubsub, CHANNELS.friendRequest, e);
  }

  friendship(e: FriendshipChanged): Promise<void> {
    return publish(this.pubsub, CHANNELS.friendship, e);
  }

  moment(e: MomentPublished): Promise<void> {
    return publish(this.pubsub, CHANNELS.moment, e);
  }

  momentCounts(e: MomentCountsChanged): Promise<void> {
    return publish(this.pubsub, CHANNELS.momentCounts, e);
  }
}
