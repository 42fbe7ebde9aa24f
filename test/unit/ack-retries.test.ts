// The WebSocket acks a node holds and retries after an outage refused them (runtime/ws/ack-retries.ts) are counted on
// the node's flock_ack_retries_pending gauge: up as each is held (once per message), down as each takes, or goes
// with its socket.
import t from "tap";
import { unavailable } from "../../runtime/circuit.ts";
import { AckRetries } from "../../runtime/ws/ack-retries.ts";
import { until } from "../helpers/wait.ts";

function gauge() {
  const g = { value: 0, inc: (n = 1) => void (g.value += n), dec: (n = 1) => void (g.value -= n) };
  return g;
}

t.test("held acks are counted until they take", async (t) => {
  const held = gauge();
  let out = true;
  const done: string[] = [];
  const r = new AckRetries(
    async () => {
      if (out) throw unavailable("postgres");
      return true;
    },
    (a) => done.push(a.id),
    held,
  );
  r.add({ id: "msg_1", raw: 1n, through: false });
  r.add({ id: "msg_2", raw: 2n, through: false });
  r.add({ id: "msg_1", raw: 1n, through: false });
  t.equal(held.value, 2, "two acks held (the same one again counts once)");
  out = false;
  await until(() => held.value === 0, { ms: 5000, what: "the retried acks to take" });
  t.same(done.sort(), ["msg_1", "msg_2"]);
  r.stop();
  t.equal(held.value, 0, "nothing held: stopping changes nothing");
});

t.test("acks held by a socket that closes are no longer counted", async (t) => {
  const held = gauge();
  const r = new AckRetries(
    async () => Promise.reject(unavailable("redis")),
    () => {},
    held,
  );
  for (let i = 1; i <= 3; i++) r.add({ id: `msg_${i}`, raw: BigInt(i), through: i === 3 });
  t.equal(held.value, 3);
  r.stop();
  t.equal(held.value, 0);
  r.add({ id: "msg_4", raw: 4n, through: false });
  t.equal(held.value, 0, "a stopped socket holds nothing more");
});
