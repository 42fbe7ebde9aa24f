// The table locks a migration declares (a line `-- Locks: <table> <MODE>, ...` in its file), taken all at once before
// any pending migration runs (runtime/db/migrate.ts). Nodes of the release before keep serving while the first new node
// migrates. A migration that took its locks one statement at a time held one table while it waited for the next,
// which an older node's send could hold while it waited for the first: a deadlock, whose victim was as likely the
// send (a 500 in the rolling-upgrade fault) as the migration. Here every declared lock is taken by one statement
// bounded at LOCK_PHASE_MS, below Postgres's deadlock_timeout (1 s): a send that waits on one of them has waited less
// than that when the migration either holds them all (and waits for nothing more it declared) or gives them all up
// to run again, so no deadlock check ever picks the send.
import type { TransactionSql } from "postgres";

/** How long the declared locks are waited for, all together, before the migration steps back (below deadlock_timeout). */
export const LOCK_PHASE_MS = 500;

/** Postgres's table lock modes, weakest first. */
const MODES = [
  "ACCESS SHARE",
  "ROW SHARE",
  "ROW EXCLUSIVE",
  "SHARE UPDATE EXCLUSIVE",
  "SHARE",
  "SHARE ROW EXCLUSIVE",
  "EXCLUSIVE",
  "ACCESS EXCLUSIVE",
] as const;
type Mode = (typeof MODES)[number];

const LINE = /^-- Locks: (.+)$/m;
const ENTRY = /^([a-z_][a-z0-9_]*) ([A-Z ]+)$/;

/** The locks `sql` declares, by table; throws on a malformed declaration (a migration's own mistake). */
export function declaredLocks(name: string, sql: string): Map<string, Mode> {
  const out = new Map<string, Mode>();
  const line = LINE.exec(sql)?.[1];
  if (!line) return out;
  for (const part of line.split(",").map((p) => p.trim())) {
    const m = ENTRY.exec(part);
    const mode = m?.[2] as Mode | undefined;
    if (!m || !mode || !MODES.includes(mode))
      throw new Error(`${name}: cannot read the lock "${part}" (-- Locks: <table> <MODE>, ...)`);
    out.set(m[1]!, mode);
  }
  return out;
}

/** The strongest mode each table is declared with across `migrations`, tables in name order. */
export function locksOf(migrations: { name: string; sql: string }[]): [string, Mode][] {
  const all = new Map<string, Mode>();
  for (const m of migrations) {
    for (const [table, mode] of declaredLocks(m.name, m.sql)) {
      const had = all.get(table);
      if (had === undefined || MODES.indexOf(mode) > MODES.indexOf(had)) all.set(table, mode);
    }
  }
  return [...all].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Takes `locks` on those of their tables that exist (a first start has none yet), all within LOCK_PHASE_MS. */
export async function takeLocks(tx: TransactionSql, locks: [string, Mode][]): Promise<void> {
  if (locks.length === 0) return;
  const names = locks.map(([t]) => t);
  const present = new Set(
    (await tx`select t from unnest(${names}::text[]) t where to_regclass(quote_ident(t)) is not null`).map(
      (r) => r["t"] as string,
    ),
  );
  const statements = locks
    .filter(([t]) => present.has(t))
    .map(([table, mode]) => `lock table "${table}" in ${mode.toLowerCase()} mode;`);
  if (statements.length === 0) return;
  // one statement, so statement_timeout bounds the whole phase (lock_timeout would bound each wait alone)
  await tx.unsafe(`set local statement_timeout = ${LOCK_PHASE_MS}`);
  await tx.unsafe(`do $$ begin ${statements.join(" ")} end $$`);
  await tx.unsafe("set local statement_timeout = 0");
}
