// `npm run cluster:local`: the reference topology on this machine (deploy/local/cluster.ts), until Ctrl-C or SIGTERM.
// Prints the address to open, then one line naming every process it started; on a signal stops them all, in order,
// and exits 0. Options: --nodes N (3), --port P (nginx's port; a free one by default).
// Exit codes: 0 stopped by a signal, 1 could not start, 69 nginx is not installed and could not be installed.
import { parseArgs } from "node:util";
import { startLocalCluster } from "./local/cluster.ts";
import { NginxUnavailable } from "./local/nginx.ts";

const say = (line: string) => process.stderr.write(`cluster:local: ${line}\n`);

const { values } = parseArgs({
  options: { nodes: { type: "string", default: "3" }, port: { type: "string" } },
  strict: true,
});
const nodes = Number(values.nodes);
const port = values.port === undefined ? undefined : Number(values.port);
if (!Number.isInteger(nodes) || nodes < 1 || nodes > 16) {
  say(`--nodes must be a whole number from 1 to 16 (got ${values.nodes})`);
  process.exit(1);
}
if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
  say(`--port must be a whole number from 1 to 65535 (got ${values.port})`);
  process.exit(1);
}

// a signal during the start stops what has started once the start returns (or fails)
let signalled: NodeJS.Signals | undefined;
let stopNow: (() => void) | undefined;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    if (signalled) return;
    signalled = sig;
    say(`${sig}: stopping`);
    stopNow?.();
  });
}

try {
  const cluster = await startLocalCluster({ nodes, port, say });
  const stopped = new Promise<void>((resolve) => {
    stopNow = () => void cluster.stop().then(resolve);
  });
  if (signalled) stopNow!();
  else {
    process.stdout.write(
      `Flock is serving at ${cluster.url}/ (nginx in front of ${cluster.nodes.length} nodes; Ctrl-C stops everything)\n`,
    );
    process.stdout.write(
      `processes: ${Object.entries(cluster.pids)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}\n`,
    );
    process.stdout.write(`nodes: ${cluster.nodes.map((n) => `${n.name}=${n.url}`).join(" ")}\n`);
    process.stdout.write(`redis: ${cluster.redisUrl}  postgres: ${cluster.databaseUrl}  logs: ${cluster.dir}\n`);
  }
  await stopped;
  say("stopped; every process is gone and the temp dir removed");
  process.exit(0);
} catch (err) {
  say((err as Error).message);
  process.exit(err instanceof NginxUnavailable ? 69 : 1);
}
