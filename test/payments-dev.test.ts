// `npm run payments:dev` as a developer runs it, on ports of its own: SIGTERM (what `kill` sends), after the start
// and while the chain is starting, leaves none of its servers behind (the chain, the facilitator, the explorer), and
// a port already in use reads as one line naming the port and the variable that moves it, exit 1.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { fileURLToPath } from "node:url";
import t, { type Test } from "tap";
import { checkPortFree, freePort } from "../runtime/payments/local/chain.ts";
import { until } from "./helpers/wait.ts";
import { alive } from "./helpers/process.ts";

// each run starts Hardhat: slow on 2 busy cores
t.setTimeout(400_000);
const ROOT = fileURLToPath(new URL("../", import.meta.url));

interface Dev {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

async function ports() {
  return { chain: await freePort(), facilitator: await freePort(), explorer: await freePort() };
}

function startDev(p: { chain: number; facilitator: number; explorer: number }): Dev {
  const child = spawn("npm", ["run", "payments:dev"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "",
      PAYMENTS_CHAIN_PORT: String(p.chain),
      PAYMENTS_FACILITATOR_PORT: String(p.facilitator),
      PAYMENTS_EXPLORER_PORT: String(p.explorer),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });

/** Whether a listen on `port` succeeds now. */
const portFree = (port: number) =>
  checkPortFree(port).then(
    () => true,
    () => false,
  );

/** Whether every port is free again within a few seconds of the exit. */
async function allFree(t: Test, p: Record<string, number>) {
  for (const [name, port] of Object.entries(p)) {
    const free = await until(() => portFree(port), { ms: 4_000, what: `the ${name} port ${port} free` }).then(
      () => true,
      () => false,
    );
    t.ok(free, `the ${name} port ${port} is free`);
  }
}

t.test("SIGTERM after the start stops the chain, the facilitator and the explorer", async (t) => {
  const p = await ports();
  const dev = startDev(p);
  t.teardown(() => dev.child.kill("SIGKILL"));
  await until(() => dev.out().includes("Ctrl-C stops"), { ms: 120_000, what: "the start" });
  for (const port of Object.values(p)) t.ok(await listening(port), `listening on ${port}`);
  dev.child.kill("SIGTERM");
  await dev.exited;
  await allFree(t, p);
});

/** The pid of the Hardhat node started for `port` (from /proc), or undefined before it is spawned. */
function chainPid(port: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
    } catch {
      continue; // gone meanwhile
    }
    if (cmd.includes("hardhat") && cmd.includes(` --port ${port} `)) return Number(entry);
  }
  return undefined;
}

t.test("SIGTERM while the chain starts stops it too", async (t) => {
  const p = await ports();
  const dev = startDev(p);
  t.teardown(() => dev.child.kill("SIGKILL"));
  let pid: number | undefined;
  // the chain's process is there and has not answered yet: the SIGTERM comes while it starts
  await until(() => (pid = chainPid(p.chain)) !== undefined, { ms: 120_000, what: "the chain's process" });
  dev.child.kill("SIGTERM");
  await dev.exited;
  await until(() => !alive(pid!), { ms: 15_000, what: "the chain's exit" }).catch(() => {});
  t.notOk(alive(pid!), "the chain's process is gone");
  if (alive(pid!)) process.kill(pid!, "SIGKILL");
  await allFree(t, p);
});

for (const [which, setting] of [
  ["facilitator", "PAYMENTS_FACILITATOR_PORT"],
  ["chain", "PAYMENTS_CHAIN_PORT"],
] as const) {
  t.test(`the ${which}'s port in use: one line naming it and ${setting}, exit 1`, async (t) => {
    const p = await ports();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(p[which], "127.0.0.1", r));
    t.teardown(() => new Promise<void>((r) => taken.close(() => r())));
    const dev = startDev(p);
    t.teardown(() => dev.child.kill("SIGKILL"));
    t.equal(await dev.exited, 1, "exit 1");
    const lines = dev
      .err()
      .split("\n")
      .filter((l) => l.includes(String(p[which])));
    t.equal(lines.length, 1, `one line names the port:\n${dev.err()}`);
    t.match(lines[0], new RegExp(`^payments:dev: port ${p[which]} \\(the .*\\) is in use .* set ${setting} `));
    t.notMatch(dev.err(), /node:events|^\s+at /m, "no stack trace");
    const { [which]: _held, ...others } = p;
    await allFree(t, others);
  });
}
