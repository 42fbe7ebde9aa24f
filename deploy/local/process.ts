// A child process of the local cluster: started in its own process group (so a Ctrl-C at the terminal reaches the
// cluster's script alone, which then stops everything in order), its output appended to a log file, stopped by a
// signal with a bound after which it is killed.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";

export class Child {
  private readonly exited: Promise<void>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
    readonly logFile: string,
  ) {
    this.exited = new Promise((resolve) => {
      proc.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve();
      });
    });
  }

  /** Starts `cmd args` with exactly `env`, output to `logFile`. Rejects when the program cannot be started at all. */
  static async start(
    name: string,
    cmd: string,
    args: string[],
    opts: { env: NodeJS.ProcessEnv; cwd: string; logFile: string },
  ): Promise<Child> {
    const log = createWriteStream(opts.logFile, { flags: "a" });
    const proc = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    proc.stdout!.pipe(log);
    proc.stderr!.pipe(log);
    await new Promise<void>((resolve, reject) => {
      proc.once("spawn", resolve);
      proc.once("error", (err) => reject(new Error(`cannot start ${name} (${cmd}): ${err.message}`)));
    });
    return new Child(name, proc, opts.logFile);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** How it ended, in words (`exit code 1`, `signal SIGKILL`), or undefined while it runs. */
  get ended(): string | undefined {
    const e = this.exitInfo;
    if (!e) return undefined;
    return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
  }

  /** Sends `sig` and waits for the exit; SIGKILL after `graceMs`. Resolves at once when it already exited. */
  async stop(sig: NodeJS.Signals, graceMs: number): Promise<void> {
    if (!this.alive) return;
    this.proc.kill(sig);
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL, synchronously (the last resort at exit). */
  kill(): void {
    if (this.alive) this.proc.kill("SIGKILL");
  }
}
