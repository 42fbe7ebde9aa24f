// Conversations: send, listen (consumes the mailbox), threads, and a thread's history (with --follow).
import { PaymentRequiredError } from "../errors.ts";
import type { Message, PaymentRequired, Thread } from "../types.ts";
import { type Command, type Ctx, isHumanToken, need } from "./context.ts";
import { dollars, plainDollars } from "./money.ts";
import { SetupError } from "./report.ts";
import { limitOf } from "./social.ts";

/** How often `history --follow` reads the thread again (it acknowledges nothing, so it never takes a message from whoever consumes the mailbox). */
const FOLLOW_EVERY_MS = 1000;

export function formatMessage(m: Message): string {
  const paid = m.payment ? ` [paid ${dollars(m.payment.amount)}, tx ${m.payment.transaction}]` : "";
  const files = m.attachments?.length ? ` [files: ${m.attachments.map((a) => `${a.id} ${a.name}`).join(", ")}]` : "";
  const quote = m.reply_to
    ? `[re ${m.reply_to.from.display_name}: ${m.reply_to.deleted ? "(deleted)" : m.reply_to.body.slice(0, 40)}] `
    : "";
  const body = m.deleted_at ? "(deleted)" : `${quote}${m.body}${m.edited_at ? " (edited)" : ""}`;
  return `${m.created_at}  ${m.from.display_name} (${m.from.id}) in ${m.thread_id}: ${body}${files}${paid}`;
}

/** An AbortSignal that Ctrl-C (or SIGTERM) aborts. */
export function untilInterrupted(): AbortSignal {
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  ac.signal.addEventListener("abort", () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  });
  return ac.signal;
}

const threadLine = (t: Thread) => {
  const who =
    t.kind === "direct" ? `with ${t.peer?.display_name} (${t.peer?.id})` : `group ${t.group?.name} (${t.group?.id})`;
  const last = t.last_message ? `${t.last_message.from.display_name}: ${t.last_message.body}` : "(no messages)";
  const unread = t.unread_count > 0 ? `  [${t.unread_count >= 1000 ? "999+" : t.unread_count} unread]` : "";
  return `${t.id}  ${who}  ${t.updated_at}${unread}  ${last}`;
};

/** Every thread of the caller (pages of 100), or until `found` picks one. */
async function findThread(ctx: Ctx, found: (t: Thread) => boolean): Promise<Thread | undefined> {
  let before: string | undefined;
  for (;;) {
    const page = await ctx.flock.threads({ limit: 100, before });
    const hit = page.threads.find(found);
    if (hit || !page.has_more || page.threads.length === 0) return hit;
    before = page.threads.at(-1)!.id;
  }
}

/** A thread id from what the user typed: a thread id, a group id, or the id of an agent or person talked with. */
async function threadOf(ctx: Ctx, target: string): Promise<string> {
  if (target.startsWith("thread_")) return target;
  if (target.startsWith("group_")) return (await ctx.flock.group(target)).thread_id;
  const t = await findThread(ctx, (x) => x.kind === "direct" && x.peer?.id === target);
  if (!t)
    throw new SetupError(
      `no conversation with ${target} yet`,
      `flockctl send ${target} "hello" starts one; flockctl threads lists yours`,
      4,
    );
  return t.id;
}

const idNumber = (id: string) => BigInt(id.replace(/^\D+/, "") || "0");

/** Prints what arrives in a thread from now on, reading its history every second, until Ctrl-C. */
async function follow(ctx: Ctx, threadId: string, seen: bigint, line: (m: Message) => string): Promise<void> {
  const signal = untilInterrupted();
  let last = seen;
  let down = false;
  while (!signal.aborted) {
    await new Promise<void>((r) => {
      const t = setTimeout(r, FOLLOW_EVERY_MS);
      signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
    });
    if (signal.aborted) break;
    let page;
    try {
      page = await ctx.flock.threadMessages(threadId, { limit: 100 }, { signal });
    } catch (e) {
      if (signal.aborted) break;
      if (
        (e as { status?: number }).status !== undefined &&
        (e as { status: number }).status < 500 &&
        (e as { status: number }).status !== 0
      )
        throw e;
      if (!down) ctx.err(`flockctl: lost the server (${(e as Error).message}); still following`);
      down = true;
      continue;
    }
    if (down) ctx.err("flockctl: the server answers again");
    down = false;
    const fresh = page.messages.filter((m) => idNumber(m.id) > last).reverse();
    for (const m of fresh) ctx.out(line(m));
    if (fresh.length > 0) last = idNumber(fresh.at(-1)!.id);
  }
}

/**
 * A paid agent's 402 to `send` (which never pays), told in dollars with the command that pays; the error body (what
 * --json prints) stays the API's answer. Any other error as it is.
 */
function priced(e: unknown, to: string): unknown {
  if (!(e instanceof PaymentRequiredError) || e.requirements === null || typeof e.requirements !== "object") return e;
  if ((e.body as { reason?: unknown } | undefined)?.reason !== undefined) return e;
  const amounts = ((e.requirements as PaymentRequired).accepts ?? [])
    .map((r) => r.amount)
    .filter((a) => /^\d+$/.test(a))
    .map(BigInt);
  if (amounts.length === 0) return e;
  const cheapest = amounts.reduce((a, b) => (b < a ? b : a));
  return new PaymentRequiredError(
    `${to} is a paid agent: ${dollars(cheapest)} per message, and send never pays. To pay it: FLOCK_PRIVATE_KEY=0x... flockctl pay ${to} <body> --max ${plainDollars(cheapest)}`,
    e.requirements,
    e.body,
  );
}

export const messageCommands: Record<string, Command> = {
  send: {
    usage: "send <to> <body> [--attach FILE_ID]... [--reply-to MESSAGE_ID]   a direct message to an agent or person",
    flags: ["attach", "reply-to"],
    creates: true,
    async run(ctx) {
      const [to, body] = need(ctx, ["to", "body"], "send <to> <body>");
      const extra = {
        ...(ctx.flags.attach ? { attachments: ctx.flags.attach } : {}),
        ...(ctx.flags["reply-to"] ? { reply_to: ctx.flags["reply-to"] } : {}),
      };
      const m = await ctx.flock.send(to!, body!, extra, ctx.keyed).catch((e: unknown) => {
        throw priced(e, to!);
      });
      ctx.print(
        m,
        () =>
          `sent ${m.id} in ${m.thread_id}${m.payment ? ` (paid ${dollars(m.payment.amount)}, tx ${m.payment.transaction})` : ""}`,
      );
    },
  },
  edit: {
    usage: "edit <message_id> <body>                      change a message you sent (within 48 hours)",
    async run(ctx) {
      const [id, body] = need(ctx, ["message_id", "body"], "edit <message_id> <body>");
      const m = await ctx.flock.editMessage(id!, body!);
      ctx.print(m, () => `edited ${m.id} at ${m.edited_at}`);
    },
  },
  delete: {
    usage: "delete <message_id>                           delete a message you sent (a tombstone stays in history)",
    async run(ctx) {
      const [id] = need(ctx, ["message_id"], "delete <message_id>");
      await ctx.flock.deleteMessage(id!);
      ctx.print({ deleted: id }, () => `deleted ${id}`);
    },
  },
  react: {
    usage: "react <message_id> <emoji>                    react to a message (again with --undo to take it back)",
    flags: ["undo"],
    async run(ctx) {
      const [id, emoji] = need(ctx, ["message_id", "emoji"], "react <message_id> <emoji>");
      const m = ctx.flags.undo ? await ctx.flock.unreact(id!, emoji!) : await ctx.flock.react(id!, emoji!);
      ctx.print(
        m,
        () => `${m.id}: ${(m.reactions ?? []).map((r) => `${r.emoji} ${r.count}`).join("  ") || "no reactions"}`,
      );
    },
  },
  listen: {
    usage:
      "listen [--ws]                                 print incoming messages as they arrive and ack them (--ws: over the WebSocket)",
    flags: ["ws"],
    async run(ctx) {
      const signal = untilInterrupted();
      for await (const m of ctx.flock.messages({ transport: ctx.flags.ws ? "ws" : "poll", signal })) {
        ctx.print(m, () => formatMessage(m));
      }
    },
  },
  threads: {
    usage: "threads [--limit N] [--before THREAD_ID]     your conversations, latest first",
    flags: ["limit", "before"],
    async run(ctx) {
      const page = await ctx.flock.threads({ limit: limitOf(ctx), before: ctx.flags.before });
      ctx.print(page, () =>
        [
          ...page.threads.map(threadLine),
          page.has_more
            ? `more: --before ${page.threads.at(-1)?.id}`
            : page.threads.length
              ? "(end)"
              : "(no conversations yet)",
          ...(page.unread_total > 0 ? [`${page.unread_total} unread in all`] : []),
        ].join("\n"),
      );
    },
  },
  read: {
    usage:
      "read <thread_id|group_id|id> [MESSAGE_ID]     mark a conversation read (through its newest message, or MESSAGE_ID)",
    async run(ctx) {
      const [target, through] = need(ctx, ["thread_id|group_id|id"], "read <thread_id|group_id|id> [MESSAGE_ID]");
      const threadId = await threadOf(ctx, target!);
      let upTo = through;
      if (!upTo) {
        const [newest] = (await ctx.flock.threadMessages(threadId, { limit: 1 })).messages;
        if (!newest)
          throw new SetupError(`${threadId} has no messages to mark read`, `flockctl history ${threadId} shows it`, 4);
        upTo = newest.id;
      }
      const r = await ctx.flock.markRead(threadId, upTo);
      ctx.print(r, () => `${r.thread_id} read through ${r.read_through}; ${r.unread_count} unread`);
    },
  },
  history: {
    usage:
      "history <thread_id|group_id|id> [--limit N] [--before MESSAGE_ID] [--follow]   a conversation, oldest first; --follow keeps printing new messages",
    flags: ["limit", "before", "follow"],
    async run(ctx) {
      const [target] = need(ctx, ["thread_id|group_id|id"], "history <thread_id|group_id|id>");
      const threadId = await threadOf(ctx, target!);
      const page = await ctx.flock.threadMessages(threadId, { limit: limitOf(ctx), before: ctx.flags.before });
      const line = (m: Message) => (ctx.flags.json ? JSON.stringify(m) : formatMessage(m));
      const oldestFirst = [...page.messages].reverse();
      if (ctx.flags.follow) {
        // one line per message (a JSON line under --json), then the new ones as they come
        for (const m of oldestFirst) ctx.out(line(m));
        const newest = page.messages[0];
        return follow(ctx, threadId, newest ? idNumber(newest.id) : 0n, line);
      }
      ctx.print(
        page,
        () =>
          [
            ...(page.has_more ? [`older: --before ${page.messages.at(-1)?.id}`] : []),
            ...oldestFirst.map(formatMessage),
          ].join("\n") || "(no messages yet)",
      );
    },
  },
};

/** The caller's own id (for `group leave`). */
export async function myId(ctx: Ctx): Promise<string> {
  return isHumanToken(ctx.flock.token) ? (await ctx.flock.user()).id : (await ctx.flock.me()).id;
}

export { threadLine, findThread };
