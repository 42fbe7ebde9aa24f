// An outage logs one line per state change of its circuit and a summary of the requests it refused, not a line per
// request (issue 38, case 5: 4,523 lines in 15 s of a Redis outage before).
import t from "tap";
import { Circuit } from "../../runtime/circuit.ts";
import { until } from "../helpers/wait.ts";

t.test("a thousand refusals during an outage: three lines", async (t) => {
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];
  const log = {
    warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }),
    info: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }),
  } as never;
  let up = false;
  const c = new Circuit("redis", () => (up ? Promise.resolve() : Promise.reject(new Error("down"))), log);
  t.teardown(() => c.stop());
  c.open(new Error("connection lost"));
  for (let i = 0; i < 1000; i++) c.refused(i % 3 === 0 ? "POST /v1/messages" : "GET /v1/messages/pending");
  up = true;
  await until(() => !c.isOpen, { what: "the circuit to close" });
  t.same(
    lines.map((l) => l.msg),
    [
      "circuit open: backend unavailable",
      "circuit closed: backend answers again",
      "requests refused while the backend was unavailable",
    ],
  );
  t.same(lines[2]!.obj["refused"], { "POST /v1/messages": 334, "GET /v1/messages/pending": 666 });
});
