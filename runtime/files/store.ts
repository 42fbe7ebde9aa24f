// Where uploaded bytes live: a blob store addressed by the SHA-256 of the content. Bytes are staged under a
// temporary name while they stream in and published under their address only once complete, so a broken
// upload leaves nothing behind. The local directory is the default; anything else (an object store) implements
// the same interface.
import type { Readable } from "node:stream";

export interface StagedBlob {
  /** Append bytes; resolves once they are written (callers await it: that is the backpressure). */
  write(chunk: Buffer): Promise<void>;
  /** No more bytes: their size and SHA-256 (lowercase hex). */
  finish(): Promise<{ sha256: string; size: number }>;
  /** Publish the finished bytes under their address. Identical content already there is simply replaced. */
  commit(): Promise<void>;
  /** Forget the staged bytes. Safe to call at any time, and after commit (then it does nothing). */
  discard(): Promise<void>;
}

export interface BlobStore {
  stage(): Promise<StagedBlob>;
  /** The bytes stored under `sha256`, or null when there are none. */
  open(sha256: string): Promise<{ size: number; stream: Readable } | null>;
  /** Delete the bytes stored under `sha256` (nothing when absent). */
  remove(sha256: string): Promise<void>;
}
