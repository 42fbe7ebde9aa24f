// The V8 flags a Flock node runs with. `npm start` (package.json) passes the same list; the bench, the process tests
// and the chaos suite start runtime/main.ts with it too, so what they measure and test is what runs.
//
// --max-semi-space-size=64 (MB, the default is 16): a group send allocates per member (append arguments and
// replies, hand-outs, acks), so the young generation filled and was scavenged many times a second, and garbage
// collection was a tenth of the server's CPU profile in the fan-out bench. Three alternating pairs at 10 messages a
// second to 999 members: 54-63 µs of server CPU per delivery with the default, 47-58 with 64 MB (bench/RESULTS.md).
// It costs up to three times 48 MB more of address space, resident only while in use.
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=64"];
