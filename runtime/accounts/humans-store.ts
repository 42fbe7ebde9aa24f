// People (principals of kind 'human', id `P` + digits) in Postgres: a new one's row, and the own profile read and
// changed. How a person signs in (wallets, provider subjects, passkeys) is runtime/signin/.
import type { TransactionSql } from "postgres";
import type { MessagePolicy, User, Wallet } from "../../schema/users.ts";
import type { Sql } from "../db/client.ts";
import { avatarPath } from "../../schema/avatar-path.ts";
import { avatarColumns, type AvatarChange } from "./avatars-store.ts";

type Db = Sql | TransactionSql;

interface UserRow {
  id: string;
  display_name: string;
  avatar_key: string | null;
  description: string;
  accepts_messages_from: MessagePolicy;
  read_receipts: boolean;
  created_at: Date;
}

/** The profile of the person `id`, with the wallets they sign in with; null when there is no such person. */
export async function loadUser(sql: Db, id: string): Promise<User | null> {
  const [row] = await sql<UserRow[]>`
    select id, display_name, avatar_key, description, accepts_messages_from, read_receipts, created_at from principals where id = ${id} and kind = 'human'`;
  if (!row) return null;
  const wallets = await sql<Wallet[]>`
    select address, kind from wallets where principal = ${id} order by created_at, address`;
  return {
    id: row.id,
    display_name: row.display_name,
    avatar_url: avatarPath(row.avatar_key),
    description: row.description,
    wallets: wallets.map((w) => ({ address: w.address, kind: w.kind })),
    accepts_messages_from: row.accepts_messages_from,
    read_receipts: row.read_receipts,
    created_at: row.created_at.toISOString(),
  };
}

/** What PATCH /v1/users/me may change. */
interface UserChange {
  display_name?: string;
  description?: string;
  accepts_messages_from?: MessagePolicy;
  read_receipts?: boolean;
  avatar?: AvatarChange | undefined;
}

/** Changes the given fields of a human's profile; false when there is no such human. */
export async function updateUser(sql: Db, id: string, change: UserChange): Promise<boolean> {
  const rows = await sql`
    update principals set
      display_name = coalesce(${change.display_name ?? null}::text, display_name),
      description = coalesce(${change.description ?? null}::text, description),
      accepts_messages_from = coalesce(${change.accepts_messages_from ?? null}::text, accepts_messages_from),
      read_receipts = coalesce(${change.read_receipts ?? null}::boolean, read_receipts),
      ${avatarColumns(sql, change.avatar)}
      updated_at = now()
    where id = ${id} and kind = 'human'
    returning id`;
  return rows.length > 0;
}

/** The row of a new person `id` named `displayName`. */
export async function insertHuman(tx: TransactionSql, id: string, displayName: string): Promise<void> {
  await tx`insert into principals (id, kind, display_name) values (${id}, 'human', ${displayName})`;
}
