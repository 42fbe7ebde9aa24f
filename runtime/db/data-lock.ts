// One node per DATA_DIR: two processes on one embedded database lose each other's writes, so the embedded mode
// takes DATA_DIR/flock.lock (O_EXCL, holding the owner's pid) before it opens the database. A lock whose holder is
// no longer alive (a crash, kill -9) is taken over; a live holder makes the start fail at once, naming it.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

class DataDirInUseError extends Error {}

interface DataDirLock {
  path: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by someone else
  }
}

function holder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "flock.lock");
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          if (holder(path) === process.pid) unlinkSync(path);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = holder(path);
    if (pid !== null && alive(pid)) {
      throw new DataDirInUseError(
        `DATA_DIR ${dir} is in use by another Flock process (pid ${pid}); stop it, or give this one its own DATA_DIR ` +
          `(if no Flock process runs there, delete ${path})`,
      );
    }
    // the holder is gone (or wrote nothing yet and died): take the lock over
    try {
      unlinkSync(path);
    } catch {
      // someone else took it over first: try again
    }
  }
  throw new DataDirInUseError(`DATA_DIR ${dir}: could not take ${path}`);
}
