// An unhandled rejection in a running node (runtime/unhandled.ts): a backend's connection error is logged and the
// node runs on; anything else is logged as fatal and exits 1.
import t from "tap";
import { onUnhandledRejection } from "../../runtime/unhandled.ts";

function harness() {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const exits: number[] = [];
  const log = {
    error: (obj: object, msg: string) => lines.push({ level: "error", msg, obj: obj as Record<string, unknown> }),
    fatal: (obj: object, msg: string) => lines.push({ level: "fatal", msg, obj: obj as Record<string, unknown> }),
  };
  return { lines, exits, handle: onUnhandledRejection(log, (code) => exits.push(code)) };
}

t.test("postgres.js's CONNECTION_CLOSED (Postgres gone mid-statement) is logged, and the node runs on", async (t) => {
  const h = harness();
  h.handle(Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" }));
  t.same(h.exits, [], "no exit");
  t.match(h.lines, [{ level: "error", obj: { backend: "postgres" }, msg: /running on/ }]);
});

t.test("any other rejection is fatal: logged, exit 1", async (t) => {
  const h = harness();
  h.handle(new TypeError("Cannot read properties of undefined (reading 'map')"));
  t.same(h.exits, [1]);
  t.match(h.lines, [{ level: "fatal", msg: /exiting/ }]);
  const s = harness();
  s.handle("a string");
  t.same(s.exits, [1], "a rejection that is not an Error too");
});
