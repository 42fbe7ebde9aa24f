// A connection URL with its password masked, for error messages and logs.
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<unparsable url>";
  }
}
