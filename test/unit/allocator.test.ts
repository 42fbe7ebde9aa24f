// The soak's --malloc: jemalloc preloaded where installed (auto), glibc's otherwise or when asked.
import t from "tap";
import { mallocEnv } from "../../bench/lib/allocator.ts";

const has = (path: string) => (p: string) => p === path;
const none = () => false;

t.test("auto preloads jemalloc where Debian installs it, and runs glibc's where it is missing", async (t) => {
  t.same(mallocEnv("auto", has("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")), {
    env: { LD_PRELOAD: "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
    name: "jemalloc",
  });
  t.same(mallocEnv("auto", has("/usr/lib64/libjemalloc.so.2")).env, { LD_PRELOAD: "/usr/lib64/libjemalloc.so.2" });
  t.same(mallocEnv("auto", none), { env: { LD_PRELOAD: "" }, name: "system" });
});

t.test("system never preloads; jemalloc asked for and missing is an error, not glibc's in its place", async (t) => {
  t.same(mallocEnv("system", has("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")), {
    env: { LD_PRELOAD: "" },
    name: "system",
  });
  t.throws(() => mallocEnv("jemalloc", none), /apt-get install libjemalloc2/);
});
