// What an MCP session's wake-up reads (runtime/mcp/sessions.ts): the thread a newly arrived message belongs to, so
// that the subscription on that thread's resource is told.
import type { Sql } from "../db/client.ts";

/** The thread of message `id` (its raw digits), or undefined when no such message is stored. */
export async function threadOfMessage(sql: Sql, id: string): Promise<string | undefined> {
  const [row] = await sql<{ thread_id: string }[]>`select thread_id::text from messages where id = ${id}`;
  return row?.thread_id;
}
