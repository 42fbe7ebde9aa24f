#!/usr/bin/env node
// Entry of `npx flockctl`: compiled with the SDK to dist/bin.js (the import below becomes ./cli.js), so the command
// runs with plain node.
import { main } from "./cli.ts";

process.exitCode = await main(process.argv.slice(2));
