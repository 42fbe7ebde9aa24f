// The events that name whom they are for, heard from every node and handed to those principals' sessions here, each
// as its frame: typing (runtime/ws/typing.ts), read markers and friend requests (runtime/events/announcer.ts), and
// edits and deletes of messages (runtime/messaging/streams.ts publishes those).
import { CHANNELS, type ChannelMessage, listen } from "../engines/node-channels.ts";
import type { FriendRequestMade, ThreadRead, TypingChanged } from "../events/announcer.ts";
import type { Message } from "../../schema/messages.ts";
import type { ServerFrame } from "../../schema/ws.ts";
import type { LocalSessions } from "./local-sessions.ts";
import type { RealtimeCore } from "./realtime.ts";
import { TYPING_TTL_SECONDS } from "./typing.ts";

export class AddressedRelay {
  constructor(
    private readonly svc: Pick<RealtimeCore, "engines" | "log">,
    private readonly sessions: LocalSessions,
  ) {}

  /** Hear every node's typing, read, message.update, friend.request and webhook events. Returns the unsubscribe functions. */
  subscribe(): Promise<() => Promise<void>>[] {
    const { pubsub } = this.svc.engines;
    const log = this.svc.log;
    return [
      listen(pubsub, CHANNELS.typing, log, (e) => this.onTyping(e)),
      listen(pubsub, CHANNELS.read, log, (e) => this.onRead(e)),
      listen(pubsub, CHANNELS.messageUpdate, log, (e) => this.onMessageUpdate(e)),
      listen(pubsub, CHANNELS.friendRequest, log, (e) => this.onFriendRequest(e)),
      listen(pubsub, CHANNELS.webhook, log, (e) => this.onWebhook(e)),
    ];
  }

  private onTyping(e: TypingChanged): void {
    for (const id of e.to) {
      for (const s of this.sessions.of(id)) {
        s.send({
          type: "typing",
          thread_id: e.thread,
          from: e.from,
          state: e.state,
          ...(e.state === "start" ? { expires_in: TYPING_TTL_SECONDS } : {}),
        });
      }
    }
  }

  private onRead(e: ThreadRead): void {
    for (const id of e.to) {
      for (const s of this.sessions.of(id))
        s.send({ type: "read", thread_id: e.thread, from: e.from, through: e.through });
    }
  }

  /** A message was edited or deleted: the members' connections get it as it is now, to replace what they show. */
  private onMessageUpdate(e: ChannelMessage<typeof CHANNELS.messageUpdate>): void {
    let frame: ServerFrame | undefined;
    for (const id of e.to) {
      const sessions = this.sessions.of(id);
      if (!sessions.size) continue;
      frame ??= { type: "message_update", message: JSON.parse(e.payload) as Message };
      for (const s of sessions) s.send(frame);
    }
  }

  /** An agent's webhook endpoint was disabled: its connections are told (runtime/webhooks/agent-delivery.ts). */
  private onWebhook(e: ChannelMessage<typeof CHANNELS.webhook>): void {
    if (e.change !== "disabled") return;
    for (const s of this.sessions.of(e.agent)) s.send({ type: "webhook_disabled", reason: e.reason ?? "failing" });
  }

  private onFriendRequest(e: FriendRequestMade): void {
    for (const s of this.sessions.of(e.to)) s.send({ type: "friend_request", request: e.request, from: e.from });
  }
}
