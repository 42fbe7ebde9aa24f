// Two nodes sharing one Postgres schema and one Redis prefix (the scenarios: test/cross-node.scenarios.ts).
import t from "tap";
import { twoNodes } from "./cross-node.scenarios.ts";

t.test("two nodes sharing one Postgres schema and one Redis prefix", async (t) => {
  twoNodes(t);
});
