// EVM addresses: the EIP-55 checksum form and the check of a mixed-case address's checksum, as viem's getAddress
// and isAddress do (test/unit/address.test.ts holds the two to each other), without loading viem. viem is ~6 MB of heap
// and ~15 MB of RSS once loaded; every node checks addresses, few use what else viem has (wallet sign-in and the
// local payment chain load it when first used). See bench/RESULTS.md, "Idle memory (issue 30)". It lives in schema/
// because the request schemas check addresses (auth.ts); the runtime takes it from here (runtime/address.ts).
import { keccak_256 } from "@noble/hashes/sha3";

/** Keccak-256 (Ethereum's: the original padding, not SHA3-256's), from @noble/hashes, the hash viem itself uses. */
export const keccak256 = (data: Uint8Array): Uint8Array => keccak_256(data);

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
