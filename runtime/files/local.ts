// The default blob store: a local directory. Blobs live at <dir>/<aa>/<bb>/<sha256>; uploads stream into
// <dir>/tmp/<random>.part and are renamed into place when complete (same filesystem, so the rename is atomic).
import { createHash, randomBytes } from "node:crypto";
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { BlobStore, StagedBlob } from "./store.ts";

const STALE_TMP_MS = 3_600_000;

export class LocalBlobStore implements BlobStore {
  private readonly tmpDir: string;
  private ready: Promise<void> | undefined;

  constructor(readonly dir: string) {
    this.tmpDir = join(dir, "tmp");
  }

  /** Creates the directories once and sweeps temporary files a crashed process left behind. */
  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.tmpDir, { recursive: true });
      const cutoff = Date.now() - STALE_TMP_MS;
      for (const name of await readdir(this.tmpDir)) {
        const p = join(this.tmpDir, name);
        const st = await stat(p).catch(() => null);
        if (st && st.mtimeMs < cutoff) await unlink(p).catch(() => {});
      }
    })();
    return this.ready;
  }

  blobPath(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.dir, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  async stage(): Promise<StagedBlob> {
    await this.prepare();
    const tmp = join(this.tmpDir, `${randomBytes(12).toString("hex")}.part`);
    const fh = await open(tmp, "wx", 0o600);
    return new LocalStaged(this, tmp, fh);
  }

  async open(sha256: string) {
    let fh: FileHandle;
    try {
      fh = await open(this.blobPath(sha256), "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    const { size } = await fh.stat();
    return { size, stream: fh.createReadStream({ highWaterMark: 256 * 1024 }) };
  }

  async remove(sha256: string): Promise<void> {
    await unlink(this.blobPath(sha256)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}

class LocalStaged implements StagedBlob {
  private readonly hash = createHash("sha256");
  private size = 0;
  private sha256: string | undefined;
  private fh: FileHandle | undefined;
  private state: "open" | "finished" | "committed" | "discarded" = "open";

  constructor(
    private readonly store: LocalBlobStore,
    private readonly tmp: string,
    fh: FileHandle,
  ) {
    this.fh = fh;
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.state !== "open" || !this.fh) throw new Error("staged blob is not open");
    this.hash.update(chunk);
    this.size += chunk.length;
    let off = 0;
    while (off < chunk.length) {
      const { bytesWritten } = await this.fh.write(chunk, off, chunk.length - off);
      off += bytesWritten;
    }
  }

  async finish() {
    if (this.state !== "open" || !this.fh) throw new Error("staged blob is not open");
    await this.fh.datasync();
    await this.closeHandle();
    this.state = "finished";
    this.sha256 = this.hash.digest("hex");
    return { sha256: this.sha256, size: this.size };
  }

  async commit(): Promise<void> {
    if (this.state !== "finished" || !this.sha256) throw new Error("staged blob is not finished");
    const dest = this.store.blobPath(this.sha256);
    await mkdir(join(dest, ".."), { recursive: true });
    await rename(this.tmp, dest);
    this.state = "committed";
  }

  async discard(): Promise<void> {
    if (this.state === "committed" || this.state === "discarded") return;
    this.state = "discarded";
    await this.closeHandle();
    await unlink(this.tmp).catch(() => {});
  }

  private async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => {});
  }
}
