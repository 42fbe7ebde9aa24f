// EVM addresses (EIP-55 checksums without viem): defined in schema/address.ts, where the request schemas check
// addresses too, and re-exported here for the runtime and the handlers.
export { getAddress, InvalidAddressError, isAddress, keccak256 } from "../schema/address.ts";
