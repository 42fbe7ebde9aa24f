#!/usr/bin/env node
// `flockctl`: the package's command. A plain file of the package (not built), so npm links it as soon as the
// package is installed; it runs the compiled CLI.
const { main } = await import("./dist/cli.js");
process.exitCode = await main(process.argv.slice(2));
