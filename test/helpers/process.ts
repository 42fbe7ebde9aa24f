// Runs Flock as a real OS process (npm start's entry), for multi-process and startup tests.
import { type ChildProcess, spawn } from "node:child_process";
import { nodeEntry, ROOT } from "./entry.ts";

export interface NodeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface Exited {
  code: number | null;
  output: string;
}

function launch(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, nodeEntry(), {
    cwd: ROOT,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      FLOCK_SHUTDOWN_LINGER: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return { child, output: () => out };
}

/** Starts a node process and resolves once it listens. */
export function startProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<NodeProcess> {
  const { child, output } = launch(env);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`node did not start in time:\n${output()}`));
    }, timeoutMs);
    const onData = () => {
      const m = /"port":(\d+).*"msg":"flock listening"/.exec(output());
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      const port = Number(m[1]);
      resolve({
        child,
        port,
        url: `http://127.0.0.1:${port}`,
        output,
        async stop(signal = "SIGTERM") {
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before listening:\n${output()}`));
    });
  });
}

/** Runs a node process expected to fail at startup; resolves with its exit code and output. */
export function runToExit(env: Record<string, string>, timeoutMs = 30_000): Promise<Exited> {
  const { child, output } = launch(env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`node did not exit in time:\n${output()}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output: output() });
    });
  });
}

/** Whether a process of that id is still there (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
