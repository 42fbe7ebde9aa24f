// The messaging core's stores (runtime/messaging/core-stores.ts) on Postgres: each method is one of the stores'
// statements (stream-store.ts, stream-heads-store.ts, messages-store.ts, acks-store.ts, direct-threads-store.ts, group-admin-store.ts), with the connection it runs on. What startNode hands
// the hub; the unit tier runs the core on the in-memory twin instead (test/twins/).
import type { Sql } from "../db/client.ts";
import type { CoreStores, Mark, SendStore, StreamStore } from "./core-stores.ts";
import { deleteMember, insertMembers, lockGroup } from "./group-admin-store.ts";
import { type AckItem, type AckOutcome, ackBatch } from "./acks-store.ts";
import { directThread } from "./direct-threads-store.ts";
import {
  committedSeqs,
  type DirectMessage,
  insertDirectBatch,
  insertGroupBatch,
  type NewMessage,
} from "./messages-store.ts";
import {
  type Backlog,
  backlog,
  joinGroup,
  leaveGroup,
  markLive,
  messagesAfter,
  type Published,
  type Read,
  streamsOfMembers,
} from "./stream-store.ts";
import { streamHeads } from "./stream-heads-store.ts";
import type { StreamId } from "./stream-id.ts";

export class PostgresStreamStore implements StreamStore {
  constructor(private readonly sql: Sql) {}

  streamsOf(members: string[]): Promise<Map<string, StreamId[]>> {
    return streamsOfMembers(this.sql, members);
  }

  backlog(reads: Read[], horizon: bigint): Promise<Backlog[]> {
    return backlog(this.sql, reads, horizon);
  }

  after(stream: StreamId, after: number, limit: number, horizon: bigint): Promise<Published[]> {
    return messagesAfter(this.sql, stream, after, limit, horizon);
  }

  heads(streams: StreamId[]): Promise<Map<StreamId, number>> {
    return streamHeads(this.sql, streams);
  }

  mark(marks: Mark[]): Promise<void> {
    return markLive(this.sql, marks);
  }

  /** In one transaction under the group's lock, as a send takes it (one lock order). */
  join(group: bigint, members: string[]): Promise<{ member: string; acked: number }[]> {
    return this.sql.begin(async (tx) => {
      await lockGroup(tx, group);
      await insertMembers(tx, group, members);
      return joinGroup(tx, group, members);
    });
  }

  leave(group: bigint, member: string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      await lockGroup(tx, group);
      const gone = await deleteMember(tx, group, member);
      await leaveGroup(tx, group, member);
      return gone;
    });
  }

  ack(items: AckItem[]): Promise<AckOutcome[]> {
    return ackBatch(this.sql, items);
  }
}

export class PostgresSendStore implements SendStore {
  constructor(private readonly sql: Sql) {}

  storeDirect(items: DirectMessage[]): Promise<(number | null | Error)[]> {
    return insertDirectBatch(this.sql, items);
  }

  storeGroup(items: NewMessage[]): Promise<(number | null | Error)[]> {
    return insertGroupBatch(this.sql, items);
  }

  committed(ids: bigint[]): Promise<Map<string, number>> {
    return committedSeqs(this.sql, ids);
  }

  directThread(me: string, to: string, newId: bigint): Promise<bigint | null> {
    return directThread(this.sql, me, to, newId);
  }
}

/** The core's stores on the connection `sql`. */
export function postgresStores(sql: Sql): CoreStores {
  return { streams: new PostgresStreamStore(sql), sends: new PostgresSendStore(sql) };
}
