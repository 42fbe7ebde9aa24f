// Two real server processes on one Postgres schema and one Redis prefix: a send on one reaches a long poll and a
// WebSocket held on the other (the scenario: test/cross-node.scenarios.ts).
import t from "tap";
import { twoProcesses } from "./cross-node.scenarios.ts";

t.test("a sender on one process, a long poll and a WebSocket on another", (t) => twoProcesses(t));
