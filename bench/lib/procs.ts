// Child processes the bench starts (Flock itself, the baselines) and stops again.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Proc {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

/** Runs `node <script> [args]` (with `--import tsx` for TypeScript) and resolves with the port it reports on stdout. */
export function startScript(
  script: string,
  env: Record<string, string>,
  portPattern: RegExp,
  timeoutMs = 60_000,
  args: string[] = [],
): Promise<Proc> {
  const flock = /runtime\/main\.[jt]s$/.test(script);
  const extra = flock ? (process.env["BENCH_NODE_ARGS"] ?? "").split(" ").filter(Boolean) : [];
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...extra, ...loader, script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // BENCH_SERVER_LOG=<file>: keep Flock's own log (its JSON lines) there, e.g. to find what answered a 500
  const logFile = flock ? process.env["BENCH_SERVER_LOG"] : undefined;
  if (logFile) {
    const log = createWriteStream(logFile, { flags: "a" });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  let out = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} did not start:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = portPattern.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      resolve({
        child,
        port: Number(m[1]),
        async stop() {
          if (child.exitCode === null) child.kill("SIGTERM");
          const t = setTimeout(() => child.kill("SIGKILL"), 15_000);
          await exited;
          clearTimeout(t);
        },
      });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}:\n${out}`));
    });
  });
}

/** CPU time a process has used, in ms (utime + stime from /proc, at 100 ticks a second); 0 when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}
