// Running flockctl from a test: from its source (client/bin.js imports cli.ts; tsx loads it), with only the
// environment given and a config folder of its own, so that a run never reads the user's saved login.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A config folder with no saved login, removed when the process exits. */
const NO_LOGIN = mkdtempSync(join(tmpdir(), "flockctl-none-"));
process.once("exit", () => rmSync(NO_LOGIN, { recursive: true, force: true }));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the CLI from its source (bin.js imports cli.ts; tsx loads it). */
export function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "client/bin.js", ...args], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", XDG_CONFIG_HOME: NO_LOGIN, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the CLI, stdout and stderr kept apart. */
export function flock(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, env);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

export const tempDir = (t: { teardown(fn: () => void): void }, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `flockctl-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
