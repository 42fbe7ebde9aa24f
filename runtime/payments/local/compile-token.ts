// Recompiles contracts/FlockUSD.sol with solc-js (the solc npm package, offline) into contracts/FlockUSD.json
// (abi, bytecode and the compiler settings). Run: npm run contracts:build
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { toolPath } from "./chain.ts";

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}
interface Solc {
  version(): string;
  compile(input: string): string;
}

const require = createRequire(import.meta.url);
const solc = require(toolPath("solc")) as Solc;
const dir = new URL("../../../contracts/", import.meta.url);
const source = readFileSync(new URL("FlockUSD.sol", dir), "utf8");
const settings = { optimizer: { enabled: true, runs: 200 }, evmVersion: "cancun" };
const input = {
  language: "Solidity",
  sources: { "FlockUSD.sol": { content: source } },
  settings: { ...settings, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
};
const out = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
const errors = (out.errors ?? []).filter((e) => e.severity === "error");
for (const e of out.errors ?? []) console.error(e.formattedMessage);
if (errors.length > 0) process.exit(1);
const c = out.contracts?.["FlockUSD.sol"]?.["FlockUSD"];
if (!c) throw new Error("FlockUSD missing from the compiler output");
const artifact = {
  contractName: "FlockUSD",
  compiler: `solc-js ${solc.version()}`,
  settings,
  abi: c.abi,
  bytecode: `0x${c.evm.bytecode.object}`,
};
writeFileSync(new URL("FlockUSD.json", dir), `${JSON.stringify(artifact, null, 2)}\n`);
console.log(
  `contracts/FlockUSD.json written (${c.evm.bytecode.object.length / 2} bytes of bytecode, ${artifact.compiler})`,
);
