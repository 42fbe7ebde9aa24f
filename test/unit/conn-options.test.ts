// The connections scenario's command line (bench/lib/conn-options.ts): which modes run, with how many sockets over
// how many client processes (never more than one process may hold).
import t from "tap";
import { connectionsOptions, PER_CLIENT_MAX } from "../../bench/lib/conn-options.ts";

t.test("modes and their defaults", async (t) => {
  t.same(
    connectionsOptions(["--scenario", "connections"]).map((o) => [o.mode, o.nodes, o.count, o.clients]),
    [
      ["one", 1, 18_000, 3],
      ["six", 6, 100_000, 6],
    ],
    "all: one full node, then six nodes holding 100,000",
  );
  t.same(
    connectionsOptions(["--mode", "one", "--count", "2000", "--clients", "2"]).map((o) => [o.mode, o.count, o.clients]),
    [["one", 2000, 2]],
  );
  t.same(
    connectionsOptions([]).map((o) => o.big),
    [0, 10_000],
    "the big group of 10,000 in the six-node mode only",
  );
  t.same(
    connectionsOptions(["--mode", "one", "--big", "900"]).map((o) => o.big),
    [900],
  );
  t.same(
    connectionsOptions(["--mode", "six", "--big", "0"]).map((o) => o.big),
    [0],
    "0: none",
  );
});

t.test("no client process is given more sockets than it may open", async (t) => {
  const [o] = connectionsOptions(["--mode", "one", "--count", "60000", "--clients", "1"]);
  t.equal(o!.clients, Math.ceil(60_000 / PER_CLIENT_MAX), "as many processes as the count needs");
  t.ok(o!.count / o!.clients <= PER_CLIENT_MAX);
});

t.test("bad values are refused with a sentence", async (t) => {
  t.throws(() => connectionsOptions(["--mode", "seven"]), /--mode is one, six or all \(got seven\)/);
  t.throws(() => connectionsOptions(["--count", "0"]), /--count must be a whole number of at least 1 \(got 0\)/);
  t.throws(() => connectionsOptions(["--width", "1.5"]), /--width must be a whole number/);
  t.throws(
    () => connectionsOptions(["--mode", "one", "--count", "1000", "--big", "5000"]),
    /--big is 0 or 20 to 10,000 members, nine tenths of them among the 1000 sockets \(got 5000\)/,
  );
  t.throws(() => connectionsOptions(["--big", "10001"]), /--big is 0 or 20 to 10,000/);
});
