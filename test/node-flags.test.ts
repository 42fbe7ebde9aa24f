// `npm start` runs the node with the V8 flags the bench measures and the process tests start it with
// (runtime/node-flags.ts): the two lists must not drift apart.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import t from "tap";
import { SERVER_NODE_FLAGS } from "../runtime/node-flags.ts";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };

t.test("npm start passes every server flag to node, before the entry", async (t) => {
  const start = pkg.scripts["start"]!.split(" ");
  t.equal(start[0], "node");
  const entry = start.indexOf("runtime/main.ts");
  t.ok(entry > 0);
  for (const flag of SERVER_NODE_FLAGS) {
    const at = start.indexOf(flag);
    t.ok(at > 0 && at < entry, `${flag} is passed to node`);
  }
});

t.test("this node accepts the flags", async (t) => {
  const out = execFileSync(process.execPath, [...SERVER_NODE_FLAGS, "-e", "process.stdout.write('ok')"], { encoding: "utf8" });
  t.equal(out, "ok");
});
