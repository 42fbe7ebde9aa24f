// Moments live: a moment published and a moment's new like and comment counts, heard from every node and handed to the
// sessions here that may see the moment, each as its frame (`moment`, `moment_counts`: schema/ws.ts). Who may see it
// is the feed's rule: the author, and for a `friends` or `public` moment those of the sessions watching the author's
// presence (runtime/ws/presence.ts) whose principals are the author's friends now and have not muted the author (a
// block ends the friendship): one statement per event on a node with such watchers (realtime-store.ts
// `audienceAmong`), since a watch list can lag an unfriending, or miss a lost friendship event; and for counts
// whoever changed them. A public moment's counts do not go to everyone: a stranger's feed sees them at its next read.
import { CHANNELS, listen } from "../engines/node-channels.ts";
import type { MomentCountsChanged, MomentPublished } from "../events/announcer.ts";
import type { Moment } from "../../schema/moments.ts";
import type { ServerFrame } from "../../schema/ws.ts";
import type { LiveSession, LocalSessions } from "./local-sessions.ts";
import type { Presence } from "./presence.ts";
import type { RealtimeCore } from "./realtime.ts";
import type { RealtimeStore } from "./realtime-store.ts";

export class MomentRelay {
  constructor(
    private readonly svc: Pick<RealtimeCore, "engines" | "log">,
    private readonly sessions: LocalSessions,
    private readonly presence: Presence,
    private readonly store: Pick<RealtimeStore, "audienceAmong">,
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
    const to = await this.audience(e.author, e.visibility);
    if (to.length === 0) return;
    const frame: ServerFrame = { type: "moment", moment: JSON.parse(e.payload) as Moment };
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
    const watching = visibility === "private" ? [] : [...this.presence.watchersOf(author)];
    const readers = [...new Set(watching.map((s) => s.principal!.id))].filter((id) => id !== by && id !== author);
    let shown = new Set<string>();
    if (readers.length > 0) {
      try {
        shown = new Set(await this.store.audienceAmong(author, readers));
      } catch (err) {
        this.svc.log.warn({ err }, "moment frame: its readers not read; sent to the author and the actor only");
      }
    }
    return [...own, ...watching.filter((s) => shown.has(s.principal!.id))].filter((s) => !s.closed);
  }
}
