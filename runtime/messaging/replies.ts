// Replies at send time: the quote of the message a send answers (`reply_to`), checked to be one of the thread's.
import { invalid, notFound } from "../errors.ts";
import { parseId } from "../ids.ts";
import type { Services } from "../services.ts";
import type { Quote } from "../../schema/messages.ts";
import { quoteOf } from "./replies-store.ts";

/**
 * The quote a send by `sender` answering `replyTo` carries, or undefined when it answers nothing. A message that is
 * not one of `thread`'s (a group's, or a pair's direct thread: `{pair}`), or is deleted or past retention, is a 400
 * on `reply_to`, whether it exists elsewhere or not. A sender who is not a member of the group gets the group's 404,
 * as a send with no `reply_to` does, whatever `reply_to` names: it cannot tell the group's messages from others.
 */
export async function replyQuote(
  svc: Services,
  thread: bigint | { pair: string },
  replyTo: string | undefined,
  sender: string,
): Promise<Quote | undefined> {
  if (replyTo === undefined) return undefined;
  const id = parseId("message", replyTo);
  const { member, quote } = await quoteOf(svc.sql, thread, id, svc.horizons.messages(), sender);
  if (!member) throw notFound("group");
  if (quote === null) throw invalid("reply_to: not a message of this conversation", { field: "reply_to" });
  return quote;
}
