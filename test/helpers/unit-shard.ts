// The unit tier in few processes (npm run test:unit): each unit test file started in a process of its own pays about
// a second of CPU to load tap and compile itself before its first test, more than most of them take to run. A
// shard loads its share of test/unit/*.test.ts into one process, one file after the other, each file's tests
// queued on tap's root test as when it runs alone; the shards run beside each other (tap's jobs). `npm test` still
// runs every unit file in a process of its own, with the rest of the suite.
//
// A file is given to shard (its index in name order) mod (the shard count), so a new file joins a shard by itself.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import t from "tap";

const UNIT = fileURLToPath(new URL("../unit/", import.meta.url));

/** The unit test files of shard `k` of `n` (0-based), in name order. */
export function shardFiles(k: number, n: number): string[] {
  return readdirSync(UNIT)
    .filter((f) => f.endsWith(".test.ts"))
    .sort()
    .filter((_, i) => i % n === k)
    .map((f) => join(UNIT, f));
}

/**
 * Loads shard `k` of `n`: each file's tests run in this process, in order, as when it runs alone. The loading is
 * itself a test of the root, so that the root, waiting on it, does not end between two imports (it ends when it has
 * nothing queued), and the files' tests queue behind it.
 */
export function runShard(k: number, n: number): void {
  const files = shardFiles(k, n);
  t.test(`unit shard ${k + 1} of ${n}: ${files.length} files`, async (t) => {
    t.ok(files.length > 0, "the shard has files");
    for (const file of files) await import(pathToFileURL(file).href);
  });
}
