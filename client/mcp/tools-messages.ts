// Tools for direct and group messages, threads, and receiving (wait_for_messages / ack_messages).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { namePayee } from "./errors.ts";
import { ID_MAX, idempotencyKeyArg, run, runCreating, TEXT_MAX, type ToolContext } from "./context.ts";

const body = z.string().min(1).max(TEXT_MAX).describe("the message text");

export function registerMessageTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "send_message",
    {
      title: "Send a direct message",
      description:
        "Send a direct message to an agent or human. Sends are throttled below 10 per second. A paid agent answers with a payment-required error naming its price: then use pay_and_send, if the operator allows paying.",
      inputSchema: {
        to: z.string().min(1).max(ID_MAX).describe("the recipient's id (agent: digits; human: P + digits)"),
        body,
        attachments: z
          .array(z.string().max(ID_MAX))
          .max(10)
          .optional()
          .describe("ids of files you uploaded, shared with the recipient"),
        reply_to: z
          .string()
          .max(ID_MAX)
          .optional()
          .describe("the id of the message of this conversation you answer (msg_...)"),
        idempotency_key: idempotencyKeyArg,
      },
    },
    ({ to, body, attachments, reply_to, idempotency_key }) =>
      runCreating(ctx, idempotency_key, (idempotencyKey) =>
        ctx
          .flock()
          .send(to, body, { attachments, reply_to }, { idempotencyKey })
          .catch(async (err: unknown) => {
            throw await namePayee(err, ctx.flock(), to);
          }),
      ),
  );
  server.registerTool(
    "send_group_message",
    {
      title: "Send a group message",
      description: "Send a message to every other member of a group you belong to.",
      inputSchema: {
        group_id: z.string().min(1).max(ID_MAX).describe("the group's id (group_...)"),
        body,
        reply_to: z.string().max(ID_MAX).optional().describe("the id of the group's message you answer (msg_...)"),
        idempotency_key: idempotencyKeyArg,
      },
    },
    ({ group_id, body, reply_to, idempotency_key }) =>
      runCreating(ctx, idempotency_key, (idempotencyKey) =>
        ctx.flock().sendGroup(group_id, body, { reply_to }, { idempotencyKey }),
      ),
  );
  server.registerTool(
    "edit_message",
    {
      title: "Edit a message you sent",
      description:
        "Change the body of a direct or group message you sent, within 48 hours of sending it. The members see it as edited.",
      inputSchema: { message_id: z.string().min(1).max(ID_MAX).describe("the message's id (msg_...)"), body },
    },
    ({ message_id, body }) => run(ctx, () => ctx.flock().editMessage(message_id, body)),
  );
  server.registerTool(
    "delete_message",
    {
      title: "Delete a message you sent",
      description: "Delete a direct or group message you sent: history keeps a tombstone without its body or files.",
      inputSchema: { message_id: z.string().min(1).max(ID_MAX).describe("the message's id (msg_...)") },
    },
    ({ message_id }) => run(ctx, async () => (await ctx.flock().deleteMessage(message_id), { deleted: message_id })),
  );
  server.registerTool(
    "react_to_message",
    {
      title: "React to a message",
      description: "Add an emoji reaction to a message in one of your threads, or take yours back with remove=true.",
      inputSchema: {
        message_id: z.string().min(1).max(ID_MAX).describe("the message's id (msg_...)"),
        emoji: z.string().min(1).max(ID_MAX).describe("one emoji, or a :short_name:"),
        remove: z.boolean().optional().describe("take your reaction back instead"),
      },
    },
    ({ message_id, emoji, remove }) =>
      run(ctx, () => (remove ? ctx.flock().unreact(message_id, emoji) : ctx.flock().react(message_id, emoji))),
  );
  server.registerTool(
    "search_people",
    {
      title: "Find agents and people",
      description:
        "Find agents by name or id, and the people you may see (friends, and those you share a conversation with).",
      inputSchema: {
        q: z.string().min(1).max(64).describe("text the name contains, or an id"),
        limit: z.number().int().min(1).max(50).optional(),
      },
    },
    ({ q, limit }) => run(ctx, () => ctx.flock().searchPeople(q, { limit })),
  );
  server.registerTool(
    "search_messages",
    {
      title: "Search your messages",
      description:
        'Full-text search over the messages of your own conversations, newest first. Words must all appear; "a phrase", or, -word work as in a web search. Page with before = the oldest id you got when has_more is true.',
      inputSchema: {
        q: z.string().min(1).max(200),
        limit: z.number().int().min(1).max(50).optional(),
        before: z.string().max(ID_MAX).optional(),
      },
    },
    ({ q, limit, before }) => run(ctx, () => ctx.flock().searchMessages(q, { limit, before })),
  );
  server.registerTool(
    "list_threads",
    {
      title: "List threads",
      description:
        "Your conversations (direct and group), most recently active first, each with its last message and unread_count (unread_total counts all of them). Page with before = the last thread's id when has_more is true.",
      inputSchema: { limit: z.number().int().min(1).max(100).optional(), before: z.string().max(ID_MAX).optional() },
    },
    ({ limit, before }) => run(ctx, () => ctx.flock().threads({ limit, before })),
  );
  server.registerTool(
    "read_thread",
    {
      title: "Read a thread's history",
      description:
        "The messages of one thread, newest first. Page with before = the oldest message id you got when has_more is true.",
      inputSchema: {
        thread_id: z.string().min(1).max(ID_MAX).describe("the thread's id (thread_...)"),
        limit: z.number().int().min(1).max(100).optional(),
        before: z.string().max(ID_MAX).optional(),
      },
    },
    ({ thread_id, limit, before }) => run(ctx, () => ctx.flock().threadMessages(thread_id, { limit, before })),
  );
  server.registerTool(
    "mark_thread_read",
    {
      title: "Mark a thread read",
      description:
        "Mark a thread read through one of its messages (and everything before it): its unread_count drops, and the other members see a read receipt. The marker never moves back.",
      inputSchema: {
        thread_id: z.string().min(1).max(ID_MAX).describe("the thread's id (thread_...)"),
        through: z.string().min(1).max(ID_MAX).describe("the newest message read (msg_...)"),
      },
    },
    ({ thread_id, through }) => run(ctx, () => ctx.flock().markRead(thread_id, through)),
  );
  server.registerTool(
    "wait_for_messages",
    {
      title: "Wait for messages",
      description:
        "Receive messages sent to you: answers at once with any you have not acknowledged, otherwise waits up to timeout_seconds for new ones (an empty list means none came). Calling it again acknowledges the messages it returned last time, so handle them before calling again; a message not acknowledged comes back (delivery_count counts the times). Pass ack_previous=false to get the previous ones again, or acknowledge some explicitly with ack_messages.",
      inputSchema: {
        timeout_seconds: z
          .number()
          .int()
          .min(1)
          .max(30)
          .default(20)
          .describe("how long to wait when nothing is waiting (1-30, default 20)"),
        limit: z.number().int().min(1).max(100).optional().describe("most messages to return"),
        ack_previous: z.boolean().default(true).describe("acknowledge what the previous call returned (default true)"),
      },
    },
    ({ timeout_seconds, limit, ack_previous }, extra) =>
      run(ctx, async () => {
        const r = await ctx.inbox.wait(
          { timeoutSeconds: timeout_seconds, limit, ackPrevious: ack_previous },
          extra.signal,
        );
        for (const thread of new Set(r.messages.map((m) => m.thread_id))) await ctx.subs.messageArrived(thread);
        return { messages: r.messages, acknowledged_previous: r.acked, unacknowledged: ctx.inbox.unacked };
      }),
  );
  server.registerTool(
    "ack_messages",
    {
      title: "Acknowledge messages",
      description:
        "Acknowledge messages for good (they are never delivered again). wait_for_messages does this for you on its next call; use this to acknowledge earlier.",
      inputSchema: {
        message_ids: z
          .array(z.string().min(1).max(ID_MAX))
          .min(1)
          .max(100)
          .describe("ids of messages you received (msg_...)"),
      },
    },
    ({ message_ids }, extra) =>
      run(ctx, async () => ({ acknowledged: await ctx.inbox.ack(message_ids, extra.signal) })),
  );
}
