// The statements the realtime relays read: a principal's friends (presence watches them), a thread's members (typing
// goes to them), what a pair of principals is now (a friendship event names only the pair), and which of some readers
// are an author's friends now who have not muted the author (a moment's frames go to them).
import type { Sql } from "../db/client.ts";

/** A friend as a session watches it: its id, name and picture key. */
export interface FriendRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
}

/** A pair as it is now: friends or not, and each one's name and picture key (a deleted account's name is ""). */
export interface PairNow {
  friends: boolean;
  a_name: string;
  a_avatar: string | null;
  b_name: string;
  b_avatar: string | null;
}

/** What the realtime relays read from Postgres. */
export interface RealtimeStore {
  /** `me`'s friends, in no order. */
  friendsOf(me: string): Promise<FriendRow[]>;
  /** The members of a thread (none for one that does not exist). */
  membersOf(thread: bigint): Promise<string[]>;
  /** Whether `a` and `b` are friends now, and their names. */
  pair(a: string, b: string): Promise<PairNow>;
  /** Which of `readers` are `author`'s friends now and have not muted `author`, in no order. */
  audienceAmong(author: string, readers: string[]): Promise<string[]>;
}

export class PostgresRealtimeStore implements RealtimeStore {
  constructor(private readonly sql: Sql) {}

  friendsOf(me: string): Promise<FriendRow[]> {
    return this.sql<FriendRow[]>`
      select f.friend as id, p.display_name, p.avatar_key from friendships f join principals p on p.id = f.friend
      where f.principal = ${me}`;
  }

  async membersOf(thread: bigint): Promise<string[]> {
    const rows = await this.sql<
      { principal: string }[]
    >`select principal from thread_members where thread_id = ${String(thread)}`;
    return rows.map((r) => r.principal);
  }

  async audienceAmong(author: string, readers: string[]): Promise<string[]> {
    if (readers.length === 0) return [];
    // a block ends the friendship (blocks-store.ts): friends now are cut by no block
    const rows = await this.sql<{ principal: string }[]>`
      select f.principal from friendships f
      where f.friend = ${author} and f.principal = any(${readers}::text[])
        and not exists (select 1 from mutes m where m.principal = f.principal and m.muted = ${author})`;
    return rows.map((r) => r.principal);
  }

  async pair(a: string, b: string): Promise<PairNow> {
    // a deleted account has no name left: its friends are told it is offline under an empty one
    const [now] = await this.sql<PairNow[]>`
      select exists (select 1 from friendships where principal = ${a} and friend = ${b}) as friends,
             coalesce(pa.display_name, '') as a_name, pa.avatar_key as a_avatar,
             coalesce(pb.display_name, '') as b_name, pb.avatar_key as b_avatar
      from (select 1) one
      left join principals pa on pa.id = ${a}
      left join principals pb on pb.id = ${b}`;
    return now!;
  }
}
