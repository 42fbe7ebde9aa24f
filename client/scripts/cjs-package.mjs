// Marks dist/cjs as CommonJS (the package itself is "type": "module"), after `tsc -p tsconfig.cjs.json` wrote it.
import { writeFileSync } from "node:fs";

writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), `${JSON.stringify({ type: "commonjs" })}\n`);
