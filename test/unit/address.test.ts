// EVM addresses without viem (runtime/address.ts): the same answers as viem's keccak256, getAddress and isAddress.
import fc from "fast-check";
import t from "tap";
import { getAddress as viemGetAddress, isAddress as viemIsAddress, keccak256 as viemKeccak, toHex } from "viem";
import { getAddress, InvalidAddressError, isAddress, keccak256 } from "../../runtime/address.ts";

t.test("keccak256 matches viem's for every length around the 136-byte block", async (t) => {
  t.equal(toHex(keccak256(new Uint8Array())), "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  for (let n = 0; n <= 300; n++) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff);
    if (toHex(keccak256(data)) !== viemKeccak(data)) t.fail(`length ${n}`);
  }
  fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), (data) => toHex(keccak256(data)) === viemKeccak(data)));
});

const hex40 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString("hex"));
/** An address-like string in any casing: lower, upper, its checksum, or each digit's case at random. */
const anyCase = fc
  .tuple(
    hex40,
    fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
    fc.constantFrom("lower", "upper", "checksum", "random"),
  )
  .map(([h, flips, kind]) => {
    if (kind === "lower") return `0x${h}`;
    if (kind === "upper") return `0x${h.toUpperCase()}`;
    if (kind === "checksum") return viemGetAddress(`0x${h}`);
    return `0x${[...h].map((c, i) => (flips[i] ? c.toUpperCase() : c)).join("")}`;
  });

t.test("getAddress and isAddress answer as viem's", async (t) => {
  fc.assert(
    fc.property(anyCase, (a) => getAddress(a) === viemGetAddress(a) && isAddress(a) === viemIsAddress(a)),
    { numRuns: 5000 },
  );
  t.equal(getAddress("0x787bc77f1700dce0f8c1581c18a12d3153d1b150"), "0x787bc77F1700DCE0f8c1581c18A12d3153D1B150");
  t.ok(isAddress("0x787bc77F1700DCE0f8c1581c18A12d3153D1B150"));
  t.notOk(isAddress("0x787bc77F1700DCE0f8c1581c18A12d3153D1b150"), "one digit's case off: a bad checksum");
  for (const bad of [
    "",
    "0x",
    "0x123",
    "787bc77f1700dce0f8c1581c18a12d3153d1b150",
    "0X787bc77f1700dce0f8c1581c18a12d3153d1b150",
    "0x787bc77f1700dce0f8c1581c18a12d3153d1b15g",
    ` 0x${"a".repeat(40)}`,
  ]) {
    t.equal(isAddress(bad), viemIsAddress(bad), JSON.stringify(bad));
    t.throws(() => getAddress(bad), InvalidAddressError);
  }
});
