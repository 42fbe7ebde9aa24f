// Same-node hand-out: a send hands its new mailbox entry straight to a recipient's WebSocket on this node when that
// connection has delivered everything before it, instead of waking it to fetch the entry back from the mailbox
// (one round trip and one script call less per delivery). The append script decides, in the same step as it stores
// the entry, whether nothing lies between the connection's cursor and the new entry (MailboxEngine.append).
import type { MailboxEntry } from "../engines/mailbox.ts";
import { addTo, removeFrom } from "../set-map.ts";
import type { Codec, Encoded } from "../ws/codec.ts";

/**
 * Where a reader takes a new entry from (MailboxEngine.append): after its cursor when nothing is under way, or,
 * while earlier offers await their appends, chained on the last of them (`afterHanded`).
 */
export type HandOutAfter = { after: string } | { afterHanded: string };

/** A reader that can take entries handed to it (a WebSocket session). */
export interface HandOutTarget {
  /**
   * Message `id` is about to be appended: where to hand it out when this reader can take it (it then expects the
   * answer through `settle`; answers may come in any order), else null.
   */
  offer(id: string): HandOutAfter | null;
  /**
   * The append's answer for an offered message: the entry when it was handed out, null when it must be fetched.
   * The reader takes the entry's frame from the hub's RecentFrames, as for a fetched entry, so every reader the send
   * hands it to writes the same bytes.
   */
  settle(id: string, entry: MailboxEntry | null): void;
}

/**
 * One message's frame per encoding at one delivery count, built once for every connection it goes to: a group send
 * to a thousand members on this node encodes it once, not a thousand times. A JSON frame is kept as UTF-8 bytes, so
 * the socket writes do not convert the text again each time.
 */
export class SharedFrames {
  private readonly byCodec = new Map<string, Encoded>();

  constructor(
    private readonly payload: string,
    private readonly deliveryCount: number,
  ) {}

  for(codec: Codec): Encoded {
    let e = this.byCodec.get(codec.name);
    if (e === undefined) {
      const made = codec.encodeMessage(this.payload, this.deliveryCount);
      e = typeof made.data === "string" ? { data: Buffer.from(made.data), binary: made.binary } : made;
      this.byCodec.set(codec.name, e);
    }
    return e;
  }
}

/**
 * The frames of the messages delivered lately, by message id and delivery count, so that the connections that fetch
 * a group message (woken, when it could not be handed out: a pass was running, or its chain of offers broke)
 * share one frame as the hand-outs of its send do, instead of a splice, a text and its UTF-8 copy per member. A
 * message's payload is the same for each of its recipients, so its frame at a given count is too. Holds the last
 * `max` messages (the oldest go first); a frame not held is simply made again.
 */
export class RecentFrames {
  private readonly byKey = new Map<string, SharedFrames>();

  constructor(private readonly max = 128) {}

  /** The frames of message `id` at `deliveryCount`, made from `payload` when not held. */
  of(id: string, deliveryCount: number, payload: string): SharedFrames {
    const key = deliveryCount === 1 ? id : `${id}#${deliveryCount}`;
    let f = this.byKey.get(key);
    if (f === undefined) {
      f = new SharedFrames(payload, deliveryCount);
      if (this.byKey.size >= this.max) this.byKey.delete(this.byKey.keys().next().value!);
      this.byKey.set(key, f);
    }
    return f;
  }
}

export class HandOuts {
  private readonly byPrincipal = new Map<string, Set<HandOutTarget>>();

  /** Register a reader; returns the function that removes it (safe to call twice). */
  add(principal: string, target: HandOutTarget): () => void {
    addTo(this.byPrincipal, principal, target);
    return () => void removeFrom(this.byPrincipal, principal, target);
  }

  /**
   * The reader to offer a principal's new entry to: only when it is the principal's one reader on this node (one
   * cursor is checked per entry; a principal with two connections here gets wake-ups as before).
   */
  only(principal: string): HandOutTarget | undefined {
    const set = this.byPrincipal.get(principal);
    if (set?.size !== 1) return undefined;
    for (const t of set) return t;
    return undefined;
  }
}
