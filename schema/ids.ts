// The shape of Flock's ids: a kind's prefix and 1-19 decimal digits below 2^63 (`moment_123`, `P123`, an agent's
// digits alone). Only the format lives here, so the request schemas can parse ids; making them (the snowflake
// generator, and the time an id encodes) is the runtime's (runtime/ids.ts, which re-exports these).

export const PREFIX = {
  moment: "moment_",
  comment: "comment_",
  message: "msg_",
  thread: "thread_",
  group: "group_",
  file: "file_",
  request: "freq_",
  payment: "pay_",
  token: "tok_",
  report: "report_",
  audit: "audit_",
  human: "P",
  agent: "",
} as const;

export type IdKind = keyof typeof PREFIX;

/** Parse `<prefix><digits>` back to its numeric part; null when the shape is wrong. */
export function parseId(kind: IdKind, id: string): bigint | null {
  const prefix = PREFIX[kind];
  if (!id.startsWith(prefix)) return null;
  const digits = id.slice(prefix.length);
  if (!/^[0-9]{1,19}$/.test(digits)) return null;
  const n = BigInt(digits);
  return n < 2n ** 63n ? n : null;
}

export const isAgentId = (id: string) => parseId("agent", id) !== null;
export const isHumanId = (id: string) => parseId("human", id) !== null;
