// Read receipts in a group: who among the other members has read how far. The thread's receipts are loaded on
// opening and on every reconnection (GET /v1/threads/{id}/reads) and moved forward by the `read` frames members send
// live; a member who turned receipts off is in neither.
import type { Author } from "@flock/client";
import { useEffect, useState } from "preact/hooks";
import { useApp } from "./context.ts";
import { newer } from "./threads.ts";

export interface Receipt {
  member: Author;
  through: string;
}

export function useGroupReads(threadId: string | undefined, group: boolean): ReadonlyMap<string, Receipt> {
  const { client, live, session, liveStatus, people } = useApp();
  const [reads, setReads] = useState<ReadonlyMap<string, Receipt>>(new Map());
  const me = session.me.id;

  const move = (member: Author, through: string) =>
    setReads((m) => {
      if (member.id === me || !newer(through, m.get(member.id)?.through)) return m;
      return new Map(m).set(member.id, { member, through });
    });

  // the receipts so far: on opening, and again when the live connection comes back (frames may have been missed)
  useEffect(() => {
    if (!threadId || !group || liveStatus !== "online") return;
    let gone = false;
    client.threadReads(threadId).then(
      (r) => {
        if (gone) return;
        people.learn(r.reads.map((x) => x.member));
        for (const x of r.reads) move(x.member, x.read_through);
      },
      () => {}, // a failure: the live frames still move the receipts, and the next reconnection asks again
    );
    return () => {
      gone = true;
    };
  }, [threadId, group, liveStatus === "online"]);

  useEffect(() => {
    if (!threadId || !group) return;
    return live.on((e) => {
      if (e.type === "read" && e.thread_id === threadId) move(e.from, e.through);
    });
  }, [threadId, group, live]);

  return reads;
}

/** "Seen by Bob", "Seen by Bob and Carol", "Seen by 3" (names in full for a title). */
export function seenBy(readers: readonly Author[]): { text: string; title: string } | null {
  if (readers.length === 0) return null;
  const names = readers.map((r) => r.display_name);
  const text =
    readers.length === 1
      ? `Seen by ${names[0]}`
      : readers.length === 2
        ? `Seen by ${names[0]} and ${names[1]}`
        : `Seen by ${readers.length}`;
  return { text, title: `Seen by ${names.join(", ")}` };
}
