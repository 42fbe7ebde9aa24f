// Running a README's shell commands from a test: bash with only the environment given, in a process group of its own
// (so that the test can stop what it started, and only that).
import { type ChildProcess, spawn } from "node:child_process";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** bash running `script` in `cwd` with only the environment given (and PATH, HOME), in a process group of its own. */
export function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<Run> & { child: ChildProcess } {
  const child = spawn("bash", ["-c", script], {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), timeoutMs);
  const done = new Promise<Run>((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  ) as Promise<Run> & { child: ChildProcess };
  done.child = child;
  return done;
}

/** Signals the process group of a child this test started (bash and what it runs). */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}
