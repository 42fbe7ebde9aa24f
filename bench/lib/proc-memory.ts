// Where a process's resident memory lies, from /proc/<pid>/smaps: glibc malloc's main heap (the `[heap]` mapping,
// which grows with the peak of native allocations and gives back only its top) and all anonymous memory (V8's heap
// pages, malloc's other arenas, thread stacks). With V8's own spaces from /metrics, a soak tells a V8 heap that
// grows from native memory that does.
import { readFileSync } from "node:fs";

export interface ProcMemory {
  /** resident bytes of the `[heap]` mapping */
  mallocHeapBytes: number;
  /** resident bytes of every anonymous mapping, `[heap]` included */
  anonBytes: number;
}

/** Parses the text of /proc/<pid>/smaps. */
export function parseSmaps(text: string): ProcMemory {
  let mallocHeapBytes = 0;
  let anonBytes = 0;
  let name = "";
  for (const line of text.split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      name = head[1]!.trim();
      continue;
    }
    if (line.startsWith("Rss:") && name === "[heap]") mallocHeapBytes += Number(line.split(/\s+/)[1]) * 1024;
    if (line.startsWith("Anonymous:")) anonBytes += Number(line.split(/\s+/)[1]) * 1024;
  }
  return { mallocHeapBytes, anonBytes };
}

/** The process's reading, or undefined when it is gone. */
export function readProcMemory(pid: number): ProcMemory | undefined {
  try {
    return parseSmaps(readFileSync(`/proc/${pid}/smaps`, "utf8"));
  } catch {
    return undefined;
  }
}
