// Web Push for people, one per node (docs/ARCHITECTURE.md, "Web Push"): the VAPID keys (runtime/push/vapid.ts), the
// cache of who holds a subscription (subscribers.ts), the sender (sender.ts) and what decides whom to push
// (notifier.ts). Built in runtime/node.ts after the realtime parts; its stop waits for the pushes under way.
import type { Core } from "../services.ts";
import { PushNotifier } from "./notifier.ts";
import { HttpPushSender, type PushSender } from "./sender.ts";
import { Subscribers } from "./subscribers.ts";
import { loadVapid, type Vapid } from "./vapid.ts";

export class WebPush {
  private constructor(
    readonly vapid: Vapid,
    readonly subscribers: Subscribers,
    readonly notifier: PushNotifier,
    /** Whether endpoints on http:// and private addresses are accepted (FLOCK_PUSH_ALLOW_PRIVATE). */
    readonly allowPrivate: boolean,
    /** Subscriptions one person may hold (FLOCK_PUSH_SUBSCRIPTIONS). */
    readonly maxSubscriptions: number,
  ) {}

  static async start(svc: Pick<Core, "config" | "sql" | "engines" | "log" | "now" | "horizons">, sender?: PushSender) {
    const vapid = await loadVapid(svc.sql, svc.config);
    const allowPrivate = svc.config.FLOCK_PUSH_ALLOW_PRIVATE;
    const subscribers = new Subscribers(svc);
    await subscribers.start();
    const notifier = new PushNotifier(svc, subscribers, sender ?? new HttpPushSender(vapid, allowPrivate));
    svc.log.info({ vapid: vapid.source, allowPrivate }, "web push");
    return new WebPush(vapid, subscribers, notifier, allowPrivate, svc.config.FLOCK_PUSH_SUBSCRIPTIONS);
  }

  async stop(): Promise<void> {
    await this.notifier.drain();
    await this.subscribers.stop();
  }
}
