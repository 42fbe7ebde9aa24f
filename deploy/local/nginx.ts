// nginx for the local cluster: Debian's package (installed when missing, without starting the system's service),
// run as a private instance whose configuration is deploy/nginx.conf itself with the local addresses, port and
// paths swapped in, so what `npm run cluster:local` and its test exercise is the template operators install.
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { join } from "node:path";

/** nginx is not installed and could not be installed here (no root, no package mirror): the cluster cannot start. */
export class NginxUnavailable extends Error {}

export const TEMPLATE = new URL("../nginx.conf", import.meta.url);

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The nginx binary: Debian puts it in /usr/sbin, which a user's PATH may lack. */
export function findNginx(): string | undefined {
  const dirs = ["/usr/sbin", "/usr/local/sbin", ...(process.env["PATH"] ?? "").split(":").filter(Boolean)];
  return dirs.map((d) => join(d, "nginx")).find(executable);
}

// Debian starts a package's service as it installs it (the stock site on port 80) unless policy-rc.d says no
// (exit 101). The guard is put in place only when no policy exists already, and removed right after.
const INSTALL = `set -e
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && guard=1
fi
trap 'if [ -n "$guard" ]; then rm -f /usr/sbin/policy-rc.d; fi' EXIT
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -q -o DPkg::Lock::Timeout=300 "$@"; }
apt_get install -y --no-install-recommends nginx || { apt_get update && apt_get install -y --no-install-recommends nginx; }
`;

/** The installed nginx, or Debian's package installed first (as root, or through sudo). */
export function ensureNginx(say: (line: string) => void): string {
  const found = findNginx();
  if (found) return found;
  const root = process.getuid?.() === 0;
  const sudo = !root && spawnSync("sudo", ["-n", "true"]).status === 0;
  if (!root && !sudo) {
    throw new NginxUnavailable(
      "nginx is not installed, and installing it needs root: run `sudo apt-get install nginx`",
    );
  }
  say("nginx is not installed: installing Debian's package (apt-get install nginx; its system service is not started)");
  const [cmd, args] = root ? ["sh", ["-c", INSTALL]] : ["sudo", ["-n", "sh", "-c", INSTALL]];
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 600_000 });
  const path = findNginx();
  if (r.status !== 0 || !path) {
    const tail = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n").slice(-8).join("\n");
    throw new NginxUnavailable(
      `nginx is not installed and apt-get could not install it (${r.error?.message ?? `exit ${r.status}`}):\n${tail}`,
    );
  }
  return path;
}

export interface LocalNginx {
  /** Where its configuration, pid file, logs and temp files go. */
  prefix: string;
  /** 127.0.0.1 port it listens on. */
  port: number;
  /** The Flock nodes' ports on 127.0.0.1. */
  nodePorts: number[];
  /**
   * Connections its one worker may hold, client and node sides together (2048 by default: a person's browser and a
   * few tools). The worker may open twice as many descriptors.
   */
  connections?: number;
}

/** Replaces what `from` matches in `text`, or fails naming it: the template changed under the renderer. */
function swap(text: string, from: RegExp, to: string): string {
  if (!from.test(text)) throw new Error(`deploy/nginx.conf no longer has ${from}: update deploy/local/nginx.ts`);
  return text.replace(from, to);
}

/** deploy/nginx.conf for a private instance: the local ports, one worker, every path under `prefix`. */
export function renderNginxConf(template: string, o: LocalNginx): string {
  let c = template;
  // a private instance runs as whoever starts it (as root, its workers run as nobody)
  c = swap(
    c,
    /^user www-data;$/m,
    "# user: the private instance's workers run as the starting user (nobody under root)",
  );
  c = swap(c, /^worker_processes auto;$/m, "worker_processes 1;");
  const connections = o.connections ?? 2048;
  c = swap(c, /^worker_rlimit_nofile \d+;$/m, `worker_rlimit_nofile ${connections * 2};`);
  c = swap(c, /^(\s*worker_connections) \d+;$/m, `$1 ${connections};`);
  c = swap(c, /^pid \/run\/nginx\.pid;$/m, `pid ${o.prefix}/nginx.pid;`);
  c = swap(c, /^error_log \/var\/log\/nginx\/error\.log/m, `error_log ${o.prefix}/error.log`);
  c = swap(c, /\/var\/log\/nginx\/flock-access\.log/, `${o.prefix}/access.log`);
  c = swap(c, /\/var\/lib\/nginx\//g, `${o.prefix}/`);
  // the upstream's run of `server 10.0.0.x:8080 ...;` lines becomes one line per local node
  const servers = /^( *)server 10\.0\.0\.\d+:8080 [^\n]*(?:\n *server 10\.0\.0\.\d+:8080 [^\n]*)*$/m;
  const indent = servers.exec(c)?.[1] ?? "";
  c = swap(
    c,
    servers,
    o.nodePorts.map((p) => `${indent}server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join("\n"),
  );
  c = swap(c, /^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${o.port};`);
  return c;
}

export function readTemplate(): string {
  return readFileSync(TEMPLATE, "utf8");
}

/** nginx's argv for a private instance whose configuration is `<prefix>/nginx.conf`, in the foreground. */
export function nginxArgs(prefix: string, test = false): string[] {
  const args = ["-p", `${prefix}/`, "-e", `${prefix}/error.log`, "-c", `${prefix}/nginx.conf`];
  return test ? [...args, "-t", "-q"] : [...args, "-g", "daemon off;"];
}
