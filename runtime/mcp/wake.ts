// What wakes an MCP session's resource notifications (runtime/mcp/sessions.ts): a waiter on every stream its
// principal takes (its inbox and each group it is in, as runtime/messaging/memberships.ts knows them), following the
// groups it joins and leaves on any node, so a message to a group wakes the session as a direct message does.
import type { Messaging } from "../messaging/hub.ts";
import type { StreamMember } from "../messaging/memberships.ts";
import { inboxStream, type StreamId } from "../messaging/stream-id.ts";

/** When the principal's groups could not be read (Postgres away), read them again after this. */
const RETRY_MS = 1000;

export class PrincipalWake implements StreamMember {
  private readonly held = new Map<StreamId, () => void>();
  private readonly removeMember: () => void;
  private closed = false;

  /** Wake `onMessage` (the raw message id, null: unknown) for every message to any stream of `principal`. */
  constructor(
    private readonly hub: Pick<Messaging, "waiters" | "streams">,
    private readonly principal: string,
    private readonly onMessage: (raw: string | null) => void,
  ) {
    this.removeMember = hub.streams.memberships.register(principal, this);
    this.streamJoined(inboxStream(principal));
    void this.readGroups();
  }

  private async readGroups(): Promise<void> {
    try {
      for (const s of await this.hub.streams.streamsOf(this.principal, false)) this.streamJoined(s);
    } catch {
      if (!this.closed) setTimeout(() => void this.readGroups(), RETRY_MS).unref();
    }
  }

  streamJoined(stream: StreamId): void {
    if (this.closed || this.held.has(stream)) return;
    this.held.set(
      stream,
      this.hub.waiters.add(stream, (raw) => this.onMessage(raw)),
    );
  }

  streamLeft(stream: StreamId): void {
    if (stream === inboxStream(this.principal)) return;
    this.held.get(stream)?.();
    this.held.delete(stream);
  }

  heldStreams(): Iterable<StreamId> {
    return this.held.keys();
  }

  /** Stop waking (the session closed). */
  close(): void {
    this.closed = true;
    this.removeMember();
    for (const stop of this.held.values()) stop();
    this.held.clear();
  }
}
