// The soak's memory attribution: smaps parsed into malloc's main heap and anonymous memory, and one labelled
// Prometheus sample picked from an exposition.
import t from "tap";
import { parseSmaps } from "../../bench/lib/proc-memory.ts";
import { promLabelled } from "../../bench/lib/sampler.ts";

t.test("smaps: [heap] resident, and anonymous memory over every mapping", async (t) => {
  const text = [
    "55d0c0a00000-55d0c2a00000 rw-p 00000000 00:00 0                          [heap]",
    "Size:              32768 kB",
    "Rss:               28672 kB",
    "Anonymous:         28672 kB",
    "7f0000000000-7f0000040000 rw-p 00000000 00:00 0 ",
    "Size:                256 kB",
    "Rss:                 200 kB",
    "Anonymous:           200 kB",
    "7f1000000000-7f1000100000 r-xp 00000000 08:01 1234                       /usr/bin/node",
    "Size:               1024 kB",
    "Rss:                1000 kB",
    "Anonymous:             0 kB",
    "",
  ].join("\n");
  t.same(parseSmaps(text), { mallocHeapBytes: 28672 * 1024, anonBytes: (28672 + 200) * 1024 });
  t.same(parseSmaps(""), { mallocHeapBytes: 0, anonBytes: 0 }, "an empty file reads as nothing");
});

t.test("a labelled sample, not the first series of the name", async (t) => {
  const text = [
    "# TYPE flock_nodejs_heap_space_size_total_bytes gauge",
    'flock_nodejs_heap_space_size_total_bytes{space="read_only"} 0',
    'flock_nodejs_heap_space_size_total_bytes{space="new"} 33554432',
    'flock_nodejs_heap_space_size_total_bytes{space="old"} 73400320',
    "",
  ].join("\n");
  t.equal(promLabelled(text, "flock_nodejs_heap_space_size_total_bytes", "space", "old"), 73400320);
  t.equal(promLabelled(text, "flock_nodejs_heap_space_size_total_bytes", "space", "new"), 33554432);
  t.ok(Number.isNaN(promLabelled(text, "flock_nodejs_heap_space_size_total_bytes", "space", "code")), "absent: NaN");
});
