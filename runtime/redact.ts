// A connection URL with its password masked, for error messages and logs.
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    // a URL the WHATWG parser refuses (a cluster's host list): mask what sits between the user and the '@'
    const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@(.*)$/i.exec(url);
    if (!m) return /^[a-z][a-z0-9+.-]*:\/\/[^\s]*$/i.test(url) ? url : "<unparsable url>";
    const i = m[2]!.indexOf(":");
    return i < 0 ? url : `${m[1]}${m[2]!.slice(0, i)}:***@${m[3]}`;
  }
}
