// Group messages hidden from a member (docs/ARCHITECTURE.md, "Blocks and mutes"): those whose sender the member
// blocked. A shared group stays, and the message is stored and delivered to the others; the blocker is handed none of
// them (long polls, sockets), each acknowledged for it as it is passed over, so it never comes back.
import { isGroupStream, type StreamId } from "./stream-id.ts";

/** A message payload's sender (its first `from` object: a payload opens with id, thread_id, from). */
const SENDER = /"from":\{"id":"([^"]+)"/;

export const senderOf = (payload: string): string | undefined => SENDER.exec(payload)?.[1];

/** Whether a hand-out of `stream` carrying `payload` is hidden from a member who blocked `hidden`. */
export const isHidden = (stream: StreamId, payload: string, hidden: ReadonlySet<string>): boolean =>
  hidden.size > 0 && isGroupStream(stream) && hidden.has(senderOf(payload) ?? "");

/**
 * Of `entries` read for a member, those it takes; the others (group messages of those it blocked) are acknowledged
 * for it first (`ack`, by raw id), so a cumulative ack or a later read never hands them out.
 */
export async function hideBlocked<E extends { stream: StreamId; id: string; payload: string }>(
  entries: E[],
  hidden: ReadonlySet<string>,
  ack: (id: bigint) => Promise<boolean>,
): Promise<E[]> {
  if (hidden.size === 0) return entries;
  const shown: E[] = [];
  const gone: Promise<boolean>[] = [];
  for (const e of entries) {
    if (isHidden(e.stream, e.payload, hidden)) gone.push(ack(BigInt(e.id)));
    else shown.push(e);
  }
  await Promise.all(gone);
  return shown;
}
