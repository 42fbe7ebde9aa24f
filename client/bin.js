#!/usr/bin/env node
// Entry of `npx flock`: load the TypeScript CLI through tsx.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./cli.ts");
process.exitCode = await main(process.argv.slice(2));
