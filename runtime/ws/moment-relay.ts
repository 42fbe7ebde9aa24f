// Moments live: a moment published and a moment's new like and comment counts, heard from every node and handed to the
// sessions here that may see the moment, each as its frame (`moment`, `moment_counts`: schema/ws.ts). Who may see it
// is the feed's rule without a statement: the author, and for a `friends` or `public` moment the author's friends (the
// sessions watching the author's presence, runtime/ws/presence.ts), less those who muted the author or whom a block
// cuts from the author (runtime/social/blocks.ts, as the feed leaves them out); and for counts whoever changed them.
// A public moment's counts do not go to everyone: a stranger's feed sees them at its next read. A moment itself goes
// only to those of the watchers who are the author's friends now (one statement per moment and node with watchers):
// a watch list can lag an unfriending by the friendship event's relay, or by a lost one; counts, numbers of a moment
// the reader was shown, go by the watch lists alone.
import { CHANNELS, listen } from "../engines/node-channels.ts";
import type { MomentCountsChanged, MomentPublished } from "../events/announcer.ts";
import type { Relations } from "../social/blocks.ts";
import type { Moment } from "../../schema/moments.ts";
import type { ServerFrame } from "../../schema/ws.ts";
import type { LiveSession, LocalSessions } from "./local-sessions.ts";
import type { Presence } from "./presence.ts";
import type { RealtimeCore } from "./realtime.ts";
import type { RealtimeStore } from "./realtime-store.ts";

export class MomentRelay {
  /** A reader's blocks and mutes (the node sets it: svc.relations); unset, no one is left out. */
  relationsOf: ((me: string) => Promise<Relations>) | undefined;

  constructor(
    private readonly svc: Pick<RealtimeCore, "engines" | "log">,
    private readonly sessions: LocalSessions,
    private readonly presence: Presence,
    private readonly store: Pick<RealtimeStore, "friendsAmong">,
  ) {}

  /** Hear every node's moment and moment.counts events. Returns the unsubscribe functions. */
  subscribe(): Promise<() => Promise<void>>[] {
    const { pubsub } = this.svc.engines;
    return [
      listen(pubsub, CHANNELS.moment, this.svc.log, (e) => void this.onMoment(e)),
      listen(pubsub, CHANNELS.momentCounts, this.svc.log, (e) => void this.onCounts(e)),
    ];
  }

  private async onMoment(e: MomentPublished): Promise<void> {
    const watching = await this.audience(e.author, e.visibility);
    const others = [...new Set(watching.map((s) => s.principal!.id))].filter((id) => id !== e.author);
    let friends: Set<string>;
    try {
      friends = new Set(await this.store.friendsAmong(e.author, others));
    } catch (err) {
      this.svc.log.warn({ err }, "moment frame: friendships not read; sent to the author's sessions only");
      friends = new Set();
    }
    const to = watching.filter((s) => s.principal!.id === e.author || friends.has(s.principal!.id));
    if (to.length === 0) return;
    const moment = JSON.parse(e.payload) as Moment;
    const frame: ServerFrame = { type: "moment", moment };
    for (const s of to) s.send(frame);
  }

  private async onCounts(e: MomentCountsChanged): Promise<void> {
    const to = await this.audience(e.author, e.visibility, e.by);
    const frame: ServerFrame = {
      type: "moment_counts",
      id: `moment_${e.id}`,
      like_count: e.likes,
      comment_count: e.comments,
      rev: e.rev,
    };
    for (const s of to) s.send(frame);
  }

  /** The sessions here that may see a moment of `author` with `visibility` (and those of `by`, who acted on it). */
  private async audience(author: string, visibility: string, by?: string): Promise<LiveSession[]> {
    const own = [...this.sessions.of(author), ...(by && by !== author ? this.sessions.of(by) : [])];
    const friends = visibility === "private" ? [] : [...this.presence.watchersOf(author)];
    const readers = [...new Set(friends.map((s) => s.principal!.id))].filter((id) => id !== by);
    const shown = await Promise.all(
      readers.map(async (id) => {
        if (!this.relationsOf) return true;
        try {
          const rel = await this.relationsOf(id);
          return !rel.muted.has(author) && !rel.blocking.has(author) && !rel.blockedBy.has(author);
        } catch (err) {
          this.svc.log.warn({ err }, "moment frame: a reader's relations not read; left out");
          return false;
        }
      }),
    );
    const kept = new Set(readers.filter((_, i) => shown[i]));
    return [...own, ...friends.filter((s) => kept.has(s.principal!.id))].filter((s) => !s.closed);
  }
}
