// Which malloc the soak's node runs with (`--malloc`): glibc's (system), or jemalloc preloaded (LD_PRELOAD), as an
// operator runs a long-lived node (README, "Memory allocator"). glibc's main heap keeps its peak: the 60-minute soak
// on glibc saw RSS rise to a plateau over 40 minutes while V8's heap stayed level (bench/RESULTS.md, "Soak").
import { existsSync, readFileSync } from "node:fs";

export type MallocChoice = "auto" | "system" | "jemalloc";

/** Where Debian's libjemalloc2 (and other distributions' jemalloc) puts the library. */
const JEMALLOC_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
  "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
  "/usr/lib64/libjemalloc.so.2",
  "/usr/lib/libjemalloc.so.2",
];

export function jemallocPath(exists: (p: string) => boolean = existsSync): string | undefined {
  return JEMALLOC_PATHS.find((p) => exists(p));
}

/** The environment that gives the node the chosen malloc, and its name; `auto` is jemalloc where it is installed. */
export function mallocEnv(
  choice: MallocChoice,
  exists: (p: string) => boolean = existsSync,
): { env: Record<string, string>; name: "system" | "jemalloc" } {
  // an LD_PRELOAD of the bench's own environment must not reach a node asked to run glibc's
  if (choice === "system") return { env: { LD_PRELOAD: "" }, name: "system" };
  const lib = jemallocPath(exists);
  if (lib === undefined) {
    if (choice === "jemalloc")
      throw new Error(
        `--malloc jemalloc: no libjemalloc.so.2 in ${JEMALLOC_PATHS.join(", ")} (Debian: apt-get install libjemalloc2)`,
      );
    return { env: { LD_PRELOAD: "" }, name: "system" };
  }
  return { env: { LD_PRELOAD: lib }, name: "jemalloc" };
}

/** Whether the running process `pid` has jemalloc mapped (the preload took). */
export function runsJemalloc(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/maps`, "utf8").includes("libjemalloc");
  } catch {
    return false;
  }
}
