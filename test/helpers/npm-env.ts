// The environment of a test's npm run with a global prefix of its own (npm_config_prefix): npm reads its global
// config from <prefix>/etc/npmrc, so a prefix of the test's own loses what the machine's global config says. The
// certificates npm trusts are carried over (its cafile, and NODE_EXTRA_CA_CERTS): where the registry is reached
// through a proxy whose certificate only the machine's bundle holds, a private prefix otherwise fails every fetch
// with SELF_SIGNED_CERT_IN_CHAIN.
import { execFileSync } from "node:child_process";

let cafile: string | undefined | null = null;

/** npm's cafile as this machine configures it (global or user config), read once; undefined when none. */
function machineCafile(): string | undefined {
  if (cafile === null) {
    const out = execFileSync("npm", ["config", "get", "cafile"], { encoding: "utf8" }).trim();
    cafile = out && out !== "null" && out !== "undefined" ? out : undefined;
  }
  return cafile;
}

/**
 * npm (with `prefix` as its global prefix when given), from the cache where it can (the tarball's ws, the MCP peers), without
 * audit, fund or update requests; a registry fetch that stalls is given up after 20 s and retried (npm's own default
 * waits 5 minutes: on a cold cache one stalled fetch held both install tests to their bounds).
 */
export function npmEnv(prefix?: string): Record<string, string> {
  const ca = machineCafile();
  const extra = process.env["NODE_EXTRA_CA_CERTS"];
  return {
    ...(prefix ? { npm_config_prefix: prefix } : {}),
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    npm_config_fetch_timeout: "20000",
    ...(ca ? { npm_config_cafile: ca } : {}),
    ...(extra ? { NODE_EXTRA_CA_CERTS: extra } : {}),
  };
}
