// EVM addresses: the EIP-55 checksum form and the check of a mixed-case address's checksum, as viem's getAddress
// and isAddress do (test/address.test.ts holds the two to each other), without loading viem. viem is ~6 MB of heap
// and ~15 MB of RSS once loaded; every node checks addresses, few use what else viem has (wallet sign-in and the
// local payment chain load it when first used). See bench/RESULTS.md, "Idle memory (issue 30)".

/** Keccak-f[1600]'s round constants, each as [low 32 bits, high 32 bits]. */
const RC: readonly (readonly [number, number])[] = [
  [0x00000001, 0x00000000], [0x00008082, 0x00000000], [0x0000808a, 0x80000000], [0x80008000, 0x80000000],
  [0x0000808b, 0x00000000], [0x80000001, 0x00000000], [0x80008081, 0x80000000], [0x00008009, 0x80000000],
  [0x0000008a, 0x00000000], [0x00000088, 0x00000000], [0x80008009, 0x00000000], [0x8000000a, 0x00000000],
  [0x8000808b, 0x00000000], [0x0000008b, 0x80000000], [0x00008089, 0x80000000], [0x00008003, 0x80000000],
  [0x00008002, 0x80000000], [0x00000080, 0x80000000], [0x0000800a, 0x00000000], [0x8000000a, 0x80000000],
  [0x80008081, 0x80000000], [0x00008080, 0x80000000], [0x80000001, 0x00000000], [0x80008008, 0x80000000],
];

/** Rotation of lane x + 5y (rho). */
const ROT = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

/** Where lane x + 5y goes (pi): y + 5 * ((2x + 3y) mod 5). */
const PI = Array.from({ length: 25 }, (_, i) => {
  const x = i % 5;
  const y = Math.floor(i / 5);
  return y + 5 * ((2 * x + 3 * y) % 5);
});

/** The permutation on 25 lanes held as low and high 32-bit halves. */
function keccakF(lo: Int32Array, hi: Int32Array): void {
  const cLo = new Int32Array(5);
  const cHi = new Int32Array(5);
  const bLo = new Int32Array(25);
  const bHi = new Int32Array(25);
  for (const [rcLo, rcHi] of RC) {
    // theta
    for (let x = 0; x < 5; x++) {
      cLo[x] = lo[x]! ^ lo[x + 5]! ^ lo[x + 10]! ^ lo[x + 15]! ^ lo[x + 20]!;
      cHi[x] = hi[x]! ^ hi[x + 5]! ^ hi[x + 10]! ^ hi[x + 15]! ^ hi[x + 20]!;
    }
    for (let x = 0; x < 5; x++) {
      const l = cLo[(x + 1) % 5]!;
      const h = cHi[(x + 1) % 5]!;
      const dLo = cLo[(x + 4) % 5]! ^ ((l << 1) | (h >>> 31));
      const dHi = cHi[(x + 4) % 5]! ^ ((h << 1) | (l >>> 31));
      for (let y = 0; y < 25; y += 5) {
        lo[x + y] = lo[x + y]! ^ dLo;
        hi[x + y] = hi[x + y]! ^ dHi;
      }
    }
    // rho and pi
    for (let i = 0; i < 25; i++) {
      const r = ROT[i]!;
      const l = lo[i]!;
      const h = hi[i]!;
      const to = PI[i]!;
      if (r === 0) {
        bLo[to] = l;
        bHi[to] = h;
      } else if (r < 32) {
        bLo[to] = (l << r) | (h >>> (32 - r));
        bHi[to] = (h << r) | (l >>> (32 - r));
      } else if (r === 32) {
        bLo[to] = h;
        bHi[to] = l;
      } else {
        bLo[to] = (h << (r - 32)) | (l >>> (64 - r));
        bHi[to] = (l << (r - 32)) | (h >>> (64 - r));
      }
    }
    // chi
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        lo[y + x] = bLo[y + x]! ^ (~bLo[y + ((x + 1) % 5)]! & bLo[y + ((x + 2) % 5)]!);
        hi[y + x] = bHi[y + x]! ^ (~bHi[y + ((x + 1) % 5)]! & bHi[y + ((x + 2) % 5)]!);
      }
    }
    // iota
    lo[0] = lo[0]! ^ rcLo;
    hi[0] = hi[0]! ^ rcHi;
  }
}

const RATE = 136;

/** Keccak-256 (Ethereum's: the original padding, not SHA3-256's). */
export function keccak256(data: Uint8Array): Uint8Array {
  const lo = new Int32Array(25);
  const hi = new Int32Array(25);
  const blocks = Math.floor(data.length / RATE) + 1;
  const padded = new Uint8Array(blocks * RATE);
  padded.set(data);
  padded[data.length] = 0x01; // the padding: 0x01, zeros, 0x80 (one byte 0x81 when only one is left)
  padded[padded.length - 1] = padded[padded.length - 1]! | 0x80;
  const view = new DataView(padded.buffer);
  for (let off = 0; off < padded.length; off += RATE) {
    for (let i = 0; i < RATE / 8; i++) {
      lo[i] = lo[i]! ^ view.getInt32(off + i * 8, true);
      hi[i] = hi[i]! ^ view.getInt32(off + i * 8 + 4, true);
    }
    keccakF(lo, hi);
  }
  const out = new DataView(new ArrayBuffer(32));
  for (let i = 0; i < 4; i++) {
    out.setInt32(i * 8, lo[i]!, true);
    out.setInt32(i * 8 + 4, hi[i]!, true);
  }
  return new Uint8Array(out.buffer);
}

const ADDRESS = /^0x[a-fA-F0-9]{40}$/;
const checksums = new Map<string, string>();
/** Checksums remembered, as viem's cache (an address's form never changes; the cache only spares the hash). */
const CACHE = 8192;

/** The EIP-55 checksum form of a 0x-prefixed 40-hex-digit address, whatever its case. */
function checksum(address: string): string {
  const lower = address.toLowerCase();
  const known = checksums.get(lower);
  if (known !== undefined) return known;
  const digits = lower.slice(2);
  const hash = keccak256(new TextEncoder().encode(digits));
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 ? digits[i]!.toUpperCase() : digits[i]!;
  }
  if (checksums.size >= CACHE) checksums.delete(checksums.keys().next().value!);
  checksums.set(lower, out);
  return out;
}

/** A valid address: 0x and 40 hex digits; a mixed-case one must carry its EIP-55 checksum (viem's isAddress). */
export function isAddress(address: string): boolean {
  if (!ADDRESS.test(address)) return false;
  if (address.toLowerCase() === address) return true;
  return checksum(address) === address;
}

/** The checksummed address (viem's getAddress): any case in, the EIP-55 form out; not an address throws. */
export function getAddress(address: string): `0x${string}` {
  if (!ADDRESS.test(address)) throw new InvalidAddressError(address);
  return checksum(address) as `0x${string}`;
}

export class InvalidAddressError extends Error {
  constructor(address: string) {
    super(`Address "${address}" is invalid.`);
    this.name = "InvalidAddressError";
  }
}
