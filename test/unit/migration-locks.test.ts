// The locks migrations declare (runtime/db/migration-locks.ts): read from their files, the strongest mode of each
// table across the pending ones, in table order; a malformed declaration stops the start with its name.
import t from "tap";
import { declaredLocks, locksOf } from "../../runtime/db/migration-locks.ts";
import { readMigrations } from "../../runtime/db/migrate.ts";

t.test("declared locks, merged", async (t) => {
  const a = { name: "0001_a.sql", sql: "-- about\n-- Locks: messages SHARE, principals ACCESS SHARE\nselect 1" };
  const b = { name: "0002_b.sql", sql: "-- Locks: principals SHARE ROW EXCLUSIVE, files SHARE\nselect 1" };
  t.same(locksOf([a, b]), [
    ["files", "SHARE"],
    ["messages", "SHARE"],
    ["principals", "SHARE ROW EXCLUSIVE"],
  ]);
  t.same(locksOf([{ name: "0003_c.sql", sql: "select 1" }]), [], "none declared");
  t.throws(
    () => declaredLocks("0004_d.sql", "-- Locks: messages SHAR"),
    /0004_d.sql: cannot read the lock "messages SHAR"/,
  );
  t.throws(() => declaredLocks("0005_e.sql", "-- Locks: drop table x; ACCESS SHARE"), /cannot read/);
});

t.test("every migration's declaration reads", async (t) => {
  const locks = locksOf(readMigrations().filter((m) => m.name >= "0021"));
  t.same(Object.fromEntries(locks), {
    file_shares: "ACCESS EXCLUSIVE",
    files: "ACCESS EXCLUSIVE",
    group_acks: "ACCESS EXCLUSIVE",
    group_cursors: "ACCESS EXCLUSIVE",
    idempotency_keys: "SHARE UPDATE EXCLUSIVE",
    messages: "SHARE ROW EXCLUSIVE",
    passkey_challenges: "SHARE",
    principals: "ACCESS EXCLUSIVE",
    thread_members: "ACCESS EXCLUSIVE",
    threads: "SHARE ROW EXCLUSIVE",
    tokens: "ACCESS EXCLUSIVE",
  });
});
