// How a backend error is read (runtime/circuit.ts): which backend it says is out (a 503), and whether a Postgres
// statement that failed may still have committed (its connection was lost while it ran: the send then reads back what
// committed). Errors shaped as postgres.js and ioredis make them, no server needed.
import t from "tap";
import { isOutage, outageOf, outcomeUnknown } from "../../runtime/circuit.ts";

const pg = (code: string) => Object.assign(new Error(`write ${code}`), { code });

t.test("a lost connection mid-statement: an outage whose outcome is unknown", async (t) => {
  for (const code of ["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "ECONNRESET", "EPIPE"]) {
    t.equal(outageOf(pg(code)), "postgres", `${code}: Postgres is out`);
    t.ok(outcomeUnknown(pg(code)), `${code}: it may have committed`);
  }
});

t.test("a statement that never reached the server, or was rolled back: an outage with a known outcome", async (t) => {
  for (const code of ["ECONNREFUSED", "CONNECT_TIMEOUT", "ETIMEDOUT", "57014", "57P01", "08006"]) {
    t.equal(outageOf(pg(code)), "postgres", `${code}: Postgres is out`);
    t.notOk(outcomeUnknown(pg(code)), `${code}: not committed`);
  }
});

t.test("other errors are neither", async (t) => {
  for (const err of [pg("23505"), new Error("boom"), null, undefined, "text", { code: 42 }]) {
    t.equal(outageOf(err), undefined);
    t.notOk(outcomeUnknown(err));
  }
  t.equal(outageOf(new Error("Connection is closed.")), "redis", "ioredis's closed connection: Redis is out");
  t.notOk(outcomeUnknown(new Error("Connection is closed.")), "a Redis error says nothing of a Postgres commit");
  t.ok(isOutage(pg("ECONNRESET")));
});
