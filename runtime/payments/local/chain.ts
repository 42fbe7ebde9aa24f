// Flock's local development chain: Hardhat 2's node (from npm) as a child process bound to 127.0.0.1, chain
// id 31337, automining, Hardhat's well-known test accounts. Development and tests only: the server never
// loads this module.
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";

export const LOCAL_CHAIN_ID = 31337;

/** The mnemonic of Hardhat's default accounts: public knowledge, for the local chain only. */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";

export interface LocalChain {
  rpcUrl: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Hardhat is one of the development tools kept out of the root install (tools/install.mjs, `npm run tools`), and it
 * runs only as a project's own installation: its configuration is in tools/, beside it.
 */
const TOOLS = fileURLToPath(new URL("../../../tools/", import.meta.url));
const tools = createRequire(`${TOOLS}package.json`);
const CONFIG = `${TOOLS}hardhat.config.cjs`;

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  const port = await listenLocal(srv, 0);
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * `server` listening on 127.0.0.1:`port` (0: any free one): its port, or the listen's error (EADDRINUSE with `port`
 * when taken). The error listener is gone once it listens, so later errors of the server are its owner's to see.
 */
export function listenLocal(
  server: Pick<Server, "once" | "off" | "listen" | "address">,
  port: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      const addr = server.address();
      resolve(typeof addr === "object" && addr ? addr.port : 0);
    });
  });
}

/** Where a development tool's file is, or an error saying how to install the tools. */
export function toolPath(file: string): string {
  try {
    return tools.resolve(file);
  } catch {
    throw new Error(
      `${file.split("/")[0]} is not installed: run \`npm run tools\` (the development tools of tools/package.json)`,
    );
  }
}

/**
 * Fails as a listen on a port in use does (code EADDRINUSE, `port`) when `port` is taken on 127.0.0.1, so that the
 * caller reads one error whichever server of the setup could not listen.
 */
export async function checkPortFree(port: number): Promise<void> {
  const srv = createServer();
  await listenLocal(srv, port);
  await new Promise((resolve) => srv.close(resolve));
}

/** How long the chain has to stop after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/**
 * Starts `hardhat node` on 127.0.0.1 and resolves once it answers JSON-RPC. It runs in a process group of its own,
 * stopped as a whole by `stop` (and when `signal` aborts while it starts), so that nothing of it outlives the caller's
 * stop.
 */
export async function startLocalChain(
  opts: { port?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<LocalChain> {
  opts.signal?.throwIfAborted();
  if (opts.port) await checkPortFree(opts.port);
  const port = opts.port ?? (await freePort());
  const cli = toolPath("hardhat/internal/cli/cli.js");
  const child = spawn(
    process.execPath,
    [cli, "node", "--hostname", "127.0.0.1", "--port", String(port), "--config", CONFIG],
    {
      cwd: TOOLS,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: process.env["HOME"] ?? "",
        HARDHAT_DISABLE_TELEMETRY_PROMPT: "true",
        HARDHAT_HIDE_SOLIDITY_SURVEY_MESSAGE: "true",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let output = "";
  const collect = (d: Buffer) => {
    if (output.length < 64_000) output += d.toString();
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      child.kill(sig); // the group is gone already (or never was)
    }
  };
  const stop = async () => {
    if (!running()) return;
    group("SIGTERM");
    const killer = setTimeout(() => group("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(killer);
  };
  const aborted = () => void stop();
  opts.signal?.addEventListener("abort", aborted, { once: true });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (opts.signal?.aborted) {
      await stop();
      opts.signal.throwIfAborted();
    }
    if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      const body = (await res.json()) as { result?: string };
      if (body.result && Number(body.result) === LOCAL_CHAIN_ID) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`hardhat node did not start in time:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Drain the output from here on so a chatty node never blocks on a full pipe.
  child.stdout!.off("data", collect);
  child.stderr!.off("data", collect);
  child.stdout!.resume();
  child.stderr!.resume();
  opts.signal?.removeEventListener("abort", aborted);
  return { rpcUrl, port, child, stop };
}
