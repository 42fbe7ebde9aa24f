// Replies at send time: the quote of the message a send answers (`reply_to`), checked to be one of the thread's.
import { invalid } from "../errors.ts";
import { parseId } from "../ids.ts";
import type { Services } from "../services.ts";
import type { Quote } from "../../schema/messages.ts";
import { quoteOf } from "./replies-store.ts";

/**
 * The quote a send answering `replyTo` carries, or undefined when it answers nothing. A message that is not one of
 * `thread`'s (a group's, or a pair's direct thread: `{pair}`), or is deleted or past retention, is a 400 on
 * `reply_to`, whether it exists elsewhere or not.
 */
export async function replyQuote(svc: Services, thread: bigint | { pair: string }, replyTo: string | undefined): Promise<Quote | undefined> {
  if (replyTo === undefined) return undefined;
  const id = parseId("message", replyTo);
  const quote = id === null ? null : await quoteOf(svc.sql, thread, id, svc.horizons.messages());
  if (quote === null) throw invalid("reply_to: not a message of this conversation", { field: "reply_to" });
  return quote;
}
