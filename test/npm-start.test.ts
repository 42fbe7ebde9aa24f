// `npm start` as an operator runs it: npm's one child is the node process on the compiled JavaScript (no shell, no
// tsx, no esbuild service), and SIGTERM to npm stops the server cleanly.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import t, { type Test } from "tap";
import { nodeEntry, ROOT } from "./helpers/entry.ts";
import { freePort } from "./helpers/private-servers.ts";
import { alive } from "./helpers/process.ts";
import { until } from "./helpers/wait.ts";

/** The processes whose parent is `pid`, with their command lines (Linux /proc). */
function children(pid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid)
        out.push({
          pid: Number(d),
          cmd: readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean).join(" "),
        });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface Started {
  npm: ReturnType<typeof spawn>;
  port: number;
  out: () => string;
  exited: Promise<number | null>;
}

/** `npm start` on a fresh data dir and port; resolves once /healthz answers. `group`: in a process group of its own. */
async function npmStart(t: Test, group = false): Promise<Started> {
  nodeEntry(); // npm start runs the build as it is: refuse a stale one
  const dir = mkdtempSync(join(tmpdir(), "flock-npm-start-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const npm = spawn("npm", ["start"], {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOME: process.env["HOME"] ?? "/tmp",
      DATA_DIR: dir,
      PORT: String(port),
      HOST: "127.0.0.1",
      FLOCK_SHUTDOWN_LINGER: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: group,
  });
  let out = "";
  npm.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  npm.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  t.teardown(() => {
    if (npm.exitCode === null) npm.kill("SIGKILL");
  });
  const answers = () =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
  const healthy = await until(answers, { ms: 30_000, every: 100 }).then(
    () => true,
    () => false,
  );
  t.ok(healthy, `npm start answered /healthz${healthy ? "" : `:\n${out}`}`);
  return { npm, port, out: () => out, exited };
}

/** npm exits, then its node child, which logged a clean stop; the port is free again. */
async function stoppedCleanly(t: Test, s: Started, node: number, signal: string): Promise<void> {
  const code = await Promise.race([s.exited, sleep(20_000, "still running", { ref: false })]); // a bound, not a wait
  t.not(code, "still running", `npm exits after ${signal}`);
  await until(() => !alive(node), { ms: 10_000, every: 50 }).catch(() => {}); // the assertion below tells
  t.notOk(alive(node), "the server process is gone");
  t.match(s.out(), new RegExp(`"signal":"${signal}","msg":"shutting down"`), `the node got the ${signal}`);
  t.match(s.out(), /"msg":"flock stopped"/, "and stopped cleanly");
  t.notMatch(s.out(), /second signal/, "one stop, not a forced exit");
  t.equal(
    await fetch(`http://127.0.0.1:${s.port}/healthz`).then(
      () => "answered",
      () => "refused",
    ),
    "refused",
    "nothing serves the port",
  );
}

const linuxOnly = { skip: process.platform !== "linux" && "reads /proc" };

t.test("npm start: one node process under npm, stopped by SIGTERM to npm", linuxOnly, async (t) => {
  const s = await npmStart(t);
  const kids = children(s.npm.pid!);
  t.equal(kids.length, 1, `npm has one child: ${kids.map((k) => k.cmd).join(" | ")}`);
  const node = kids[0]!;
  t.match(node.cmd, /^\S*node dist\/runtime\/main\.js$/, "node itself on the compiled entry, no shell or tsx between");
  t.same(children(node.pid), [], "and node starts no process of its own (no esbuild service)");
  s.npm.kill("SIGTERM");
  await stoppedCleanly(t, s, node.pid, "SIGTERM");
});

t.test("Ctrl-C in a terminal (SIGINT to npm's whole process group) stops it cleanly", linuxOnly, async (t) => {
  const s = await npmStart(t, true);
  const node = children(s.npm.pid!)[0]!;
  // the terminal signals every process of the foreground group; npm forwards it to node once more
  process.kill(-s.npm.pid!, "SIGINT");
  await stoppedCleanly(t, s, node.pid, "SIGINT");
});
