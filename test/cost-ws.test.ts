// The adversarial-cost suite over the WebSocket channel /v1/ws (issue 50): every client frame type of schema/ws.ts,
// each string and object field sent long and hostile values up to and past the 64 KiB frame cap (JSON frames, and
// MessagePack for the strings), plus frames of no known type and text that is not JSON, one frame at a time while a
// bystander polls /healthz. It fails on a hold or heap growth past test/helpers/cost.ts's bounds, an error frame
// that is internal or not in the shape, a close other than "too large" or "typing flood", and a frame left
// unanswered. Both modes: real Postgres and Redis, and embedded (PGlite, memory engines), with fewer string
// families per field in embedded mode.
import t from "tap";
import { Ledger, Meter } from "./helpers/cost.ts";
import { makeWorld, type Mode, startCostNode } from "./helpers/cost-http.ts";
import { walkFrames } from "./helpers/cost-ws.ts";

// on a loaded machine (other tap jobs, other tests) the walk takes several times its CPU on the wall clock
t.setTimeout(300_000);

for (const mode of ["servers", "embedded"] as const satisfies readonly Mode[]) {
  t.test(`every WebSocket frame's inputs have a bounded cost (${mode})`, async (t) => {
    const started = performance.now();
    const node = await startCostNode(t, mode);
    const world = await makeWorld(node.url);
    const meter = await Meter.start(t, `${node.url}/healthz`);
    const ledger = new Ledger();
    const frames = await walkFrames(node.url, world.agent.token, meter, ledger, {
      perField: mode === "servers" ? 3 : 2,
      msgpack: mode === "servers",
    });
    t.same(frames.sort(), ["ack", "auth", "ping", "typing"], "every client frame type was walked");
    for (const target of ledger.targets()) {
      t.same(
        ledger.failures(target),
        [],
        `${target}: ${ledger.results.filter((r) => r.target === target).length} frames within the bounds`,
      );
    }
    t.same(
      meter.bystander.failed,
      0,
      `the bystander's ${meter.bystander.polls} polls of /healthz were all answered 200`,
    );
    const max = ledger.max();
    t.comment(
      `${mode}: ${ledger.results.length} WebSocket cases over ${ledger.targets().join(", ")} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    t.comment(
      `${mode}: longest hold ${max.hold.toFixed(1)} ms on the CPU (${max.wall.toFixed(1)} ms on the wall clock), longest bystander wait ${max.bystander.toFixed(1)} ms, most heap growth ${max.heap.toFixed(1)} MB`,
    );
    t.comment(`${mode}: by longest hold:\n  ${ledger.worst(10).join("\n  ")}`);
  });
}
