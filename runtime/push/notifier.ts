// Pushes to people whose pages are closed (docs/ARCHITECTURE.md, "Web Push"): a direct or group message, or a friend
// request, for a person who holds a push subscription and no live socket or recent poll (the presence engine: online
// while any entry of any node lives, runtime/ws/presence.ts and runtime/messaging/poll-presence.ts) goes to each of
// their subscriptions as a small JSON payload with their unread count, so the badge is right when they return.
// The node that stored the message (the sender's) pushes, once per message, behind the send's answer: the send calls
// in, in memory; a recipient who holds no subscription (runtime/push/subscribers.ts) costs it nothing more. A push
// service's 404 or 410 says the subscription is gone: it is forgotten.
import type { PushPayload } from "../../schema/push.ts";
import type { Core } from "../services.ts";
import { unreadTotal } from "../messaging/read-markers-store.ts";
import type { PushOptions, PushSender } from "./sender.ts";
import { dropEndpoint, groupSubscriptions, type SubscriptionRow, subscriptionsOf } from "./push-store.ts";
import type { Subscribers } from "./subscribers.ts";

/** Pushes under way at once on a node; past it a push is skipped (and logged): a notification, not a delivery. */
const MAX_IN_FLIGHT = 256;
/** Characters of a message's text a push carries. */
const BODY_CHARS = 200;
/** A message's push waits this long (seconds) at the push service for a browser that is offline. */
const MESSAGE_TTL = 86_400;
/** A friend request's push waits this long: it stays for days on the Friends page too. */
const FRIEND_REQUEST_TTL = 7 * 86_400;

export interface Arrived {
  /** Who sent it, by name. */
  from: { id: string; displayName: string };
  threadId: bigint;
  body: string;
  attachments: number;
}

type PushCore = Pick<Core, "sql" | "engines" | "log" | "now" | "horizons">;

export class PushNotifier {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly svc: PushCore,
    private readonly subscribers: Subscribers,
    private readonly sender: PushSender,
  ) {}

  /** A direct message to `to` was stored: pushed when `to` holds a subscription and no open page. */
  direct(to: string, m: Arrived): void {
    if (!this.subscribers.has(to)) return;
    this.behind(async () => {
      const subs = await this.closedPagesOf(await subscriptionsOf(this.svc.sql, [to]));
      await this.pushAll(subs, () => this.messagePayload(m, m.from.displayName), "high", m.threadId);
    });
  }

  /** A group message was stored: pushed to its members (but the sender) holding a subscription and no open page. */
  group(m: Arrived): void {
    // nobody anywhere holds a subscription: no statement (a group's members are not cached on every node)
    if (this.subscribers.size === 0) return;
    this.behind(async () => {
      const rows = await groupSubscriptions(this.svc.sql, m.threadId, m.from.id);
      const subs = await this.closedPagesOf(rows);
      const group = rows[0]?.group_name;
      const title = group ? `${m.from.displayName} in ${group}` : m.from.displayName;
      await this.pushAll(subs, () => this.messagePayload(m, title), "normal", m.threadId);
    });
  }

  /** A friend request to `to` was made: pushed when `to` holds a subscription and no open page. */
  friendRequest(to: string, from: { display_name: string }): void {
    if (!this.subscribers.has(to)) return;
    this.behind(async () => {
      const subs = await this.closedPagesOf(await subscriptionsOf(this.svc.sql, [to]));
      const payload = {
        type: "friend_request" as const,
        title: `${from.display_name} wants to be friends`,
        body: "Accept or decline on the Friends page.",
        url: "#/friends",
        thread_id: null,
      };
      await this.pushAll(subs, () => payload, "normal", null, FRIEND_REQUEST_TTL);
    });
  }

  /** Waits for the pushes under way (the node's stop). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private messagePayload(m: Arrived, title: string): Omit<PushPayload, "unread"> {
    const text = m.body || (m.attachments > 0 ? "(attachment)" : "");
    return {
      type: "message",
      title,
      body: text.slice(0, BODY_CHARS),
      url: `#/chat/t/thread_${m.threadId}`,
      thread_id: `thread_${m.threadId}`,
    };
  }

  /** Runs `work` behind the answer, tracked for `drain`, its failure logged. */
  private behind(work: () => Promise<void>): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT) {
      this.svc.log.warn({ inFlight: this.inFlight.size }, "push skipped: too many under way");
      return;
    }
    const p = work().catch((err: unknown) => this.svc.log.warn({ err }, "push not sent"));
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** The subscriptions of those among `rows`' people with no open page (no live presence entry anywhere). */
  private async closedPagesOf<R extends SubscriptionRow>(rows: R[]): Promise<R[]> {
    if (rows.length === 0) return [];
    const people = [...new Set(rows.map((r) => r.principal))];
    const online = await this.svc.engines.presence.online(people, this.svc.now());
    return rows.filter((r) => !online.has(r.principal));
  }

  private async pushAll(
    subs: SubscriptionRow[],
    payload: () => Omit<PushPayload, "unread">,
    urgency: PushOptions["urgency"],
    thread: bigint | null,
    ttl = MESSAGE_TTL,
  ): Promise<void> {
    const byPerson = new Map<string, SubscriptionRow[]>();
    for (const s of subs) byPerson.set(s.principal, [...(byPerson.get(s.principal) ?? []), s]);
    const base = payload();
    // a thread's pushes replace each other at the push service while the browser is away (RFC 8030 Topic)
    const topic = thread === null ? "friends" : `t${thread}`;
    await Promise.all(
      [...byPerson].map(async ([person, theirs]) => {
        const unread = await unreadTotal(this.svc.sql, person, this.svc.horizons.messages());
        const text = JSON.stringify({ ...base, unread } satisfies PushPayload);
        await Promise.all(theirs.map((s) => this.pushOne(s, text, { ttl, urgency, topic })));
      }),
    );
  }

  private async pushOne(s: SubscriptionRow, text: string, opts: PushOptions): Promise<void> {
    let status: number;
    try {
      status = await this.sender.send({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, text, opts);
    } catch (err) {
      this.svc.log.warn({ err, principal: s.principal }, "push service not reached");
      return;
    }
    if (status === 404 || status === 410) {
      const left = await dropEndpoint(this.svc.sql, s.principal, s.endpoint);
      if (!left) await this.subscribers.changed(s.principal, false);
      this.svc.log.info({ principal: s.principal, status }, "push subscription gone: forgotten");
    } else if (status < 200 || status >= 300) {
      this.svc.log.warn({ principal: s.principal, status }, "push refused by the push service");
    }
  }
}
