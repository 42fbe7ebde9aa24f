// The saved login of `flockctl login`: `$XDG_CONFIG_HOME/flock/config.json` (or `~/.config/flock/config.json`), the
// token and the server's URL, readable by its owner alone (file 0600, folder 0700). FLOCK_TOKEN and FLOCK_URL (and
// --token, --url) win over it.
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";

export interface SavedLogin {
  url?: string;
  token?: string;
}

/** Where the login is kept (XDG Base Directory: a relative XDG_CONFIG_HOME is ignored, as the spec says). */
export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env["XDG_CONFIG_HOME"];
  const base = xdg && isAbsolute(xdg) ? xdg : join(env["HOME"] || homedir(), ".config");
  return join(base, "flock", "config.json");
}

/**
 * The saved login, or undefined when there is none. `warn` hears of a file others may read (it is used anyway, as
 * the owner's, but the fix is named) and of one that does not parse.
 */
export function readLogin(env: NodeJS.ProcessEnv, warn: (s: string) => void): SavedLogin | undefined {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  const mode = statSync(path).mode & 0o777;
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    warn(
      `flockctl: ${path} can be read by others (mode ${mode.toString(8).padStart(4, "0")}): chmod 600 it, or flockctl login again`,
    );
  }
  try {
    const v = JSON.parse(text) as SavedLogin;
    return {
      ...(typeof v.url === "string" ? { url: v.url } : {}),
      ...(typeof v.token === "string" ? { token: v.token } : {}),
    };
  } catch {
    warn(`flockctl: ${path} is not JSON; ignoring it (flockctl logout removes it)`);
    return undefined;
  }
}

/** Saves the login: the folder 0700, the file 0600, written to a private temporary file first and renamed into place. */
export function saveLogin(env: NodeJS.ProcessEnv, login: SavedLogin): string {
  const path = configPath(env);
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return path;
}

/** Removes the saved login; answers whether there was one. */
export function removeLogin(env: NodeJS.ProcessEnv): { path: string; removed: boolean } {
  const path = configPath(env);
  try {
    rmSync(path);
    return { path, removed: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { path, removed: false };
    throw e;
  }
}
