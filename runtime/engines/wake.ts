// The wake-up a mailbox change publishes on the one wake channel every node subscribes to: which principals'
// mailboxes changed and, for an append, the message that arrived, so that a connection already fetching can
// tell whether its fetch will bring that message or it must fetch again. Shared by both mailbox engines.
//   append: "<principal>,<principal>,:<raw message id>,<principal>,:<raw message id>" (each message follows
//           the principals it reached)
//   clear:  "<principal>" (no message follows: the mailbox changed as a whole)
// A comma-separated list of principals was the earlier form, and nodes that read it ignore the ":<id>"
// elements (no principal has that name), so old and new nodes wake each other during a rolling upgrade.
// Principal ids and raw message ids never contain ',' or ':'.

/** The wake-up of an append: each principal named, then the message that reached it. */
export function appendWake(items: readonly { principal: string; id: string }[]): string {
  const byId = new Map<string, Set<string>>();
  for (const it of items) {
    let set = byId.get(it.id);
    if (!set) {
      set = new Set();
      byId.set(it.id, set);
    }
    set.add(it.principal);
  }
  const parts: string[] = [];
  for (const [id, principals] of byId) parts.push(...principals, `:${id}`);
  return parts.join(",");
}

/** The wake-up of a cleared mailbox. */
export const clearWake = (principal: string): string => principal;

/** Call `handler` for each principal a wake-up names, with its message (null: the mailbox as a whole). */
export function readWake(text: string, handler: (principal: string, id: string | null) => void): void {
  const parts = text.split(",");
  let from = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith(":")) {
      const id = part.slice(1);
      for (let j = from; j < i; j++) handler(parts[j]!, id);
      from = i + 1;
    }
  }
  for (let j = from; j < parts.length; j++) if (parts[j]) handler(parts[j]!, null);
}
