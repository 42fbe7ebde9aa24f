// The peers the fan-out bench measures beside Flock (Socket.IO with its Redis adapter, Soketi), installed on demand
// into bench/.peers, an ignored folder: they are not project dependencies. Soketi pins uWebSockets.js to a GitHub
// tag that cannot be fetched here, so an override aliases it to the build Flock itself runs on this Node and OS
// (runtime/uws.ts: on Debian 12 the v20.30 build, since v20.57 needs glibc 2.38).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chooseUws, thisPlatform } from "../../runtime/uws.ts";
import { ROOT } from "../lib/procs.ts";

export const PEERS_DIR = join(ROOT, "bench/.peers");

const ours = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
const choice = chooseUws(thisPlatform());
if ("error" in choice) throw new Error(choice.error);

const manifest = {
  name: "flock-bench-peers",
  private: true,
  description: "written by bench/peers/install.ts; not a project dependency",
  dependencies: {
    "@soketi/soketi": "1.6.1",
    "socket.io": "4.8.1",
    "socket.io-client": "4.8.1",
    "@socket.io/redis-adapter": "8.3.0",
    ioredis: "5.4.1",
  },
  overrides: { "uWebSockets.js": ours.dependencies[choice.package] },
};

/** Installs the peers unless the folder already holds this manifest's install. */
export function ensurePeers(progress: (msg: string) => void): void {
  mkdirSync(PEERS_DIR, { recursive: true });
  const file = join(PEERS_DIR, "package.json");
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (current === text && existsSync(join(PEERS_DIR, "node_modules/@soketi/soketi"))) return;
  writeFileSync(file, text);
  progress(`installing the peers into ${PEERS_DIR}`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: PEERS_DIR, stdio: "inherit" });
}
