// Whether Flock can be reached, for the error banners: a request that got no answer (the browser's "Failed to fetch")
// or a 502/503/504 marks the connection down; the next answer of any kind below 500, or the live connection coming
// back, marks it up again, and every banner showing a connection failure clears itself (ui.tsx Alert). While down,
// the app asks /healthz now and then (5 s, doubling to 30 s) so the banner clears even when the person does nothing.
import { FlockError } from "@flock/client";

type Listener = () => void;

class Net {
  private down = false;
  private probeTimer: ReturnType<typeof setTimeout> | undefined;
  private probeDelay = 5000;
  private base = location.origin;
  private readonly listeners = new Set<Listener>();
  /** Texts shown for connection failures: a banner with one of these clears once the connection is back. */
  readonly transientTexts = new Set<string>();
  /** How many times the connection came back (a banner compares it with the count when it appeared). */
  recoveries = 0;

  /** The fetch handed to the SDK: watches every answer and failure. */
  readonly fetch: typeof fetch = async (input, init) => {
    try {
      const res = await globalThis.fetch(input, init);
      if (res.status >= 502 && res.status <= 504) this.fail();
      else this.up();
      return res;
    } catch (err) {
      if (!(err instanceof DOMException && err.name === "AbortError")) this.fail();
      throw err;
    }
  };

  /** The server the probe asks (the session's API). */
  setBase(api: string): void {
    this.base = api.replace(/\/+$/, "");
  }

  on(cb: Listener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** A failure as the banner shows it; connection failures are remembered as such. */
  remember(err: unknown, text: string): string {
    if (isTransient(err)) this.transientTexts.add(text);
    return text;
  }

  /** Something answered: the connection is back. */
  up(): void {
    clearTimeout(this.probeTimer);
    this.probeDelay = 5000;
    if (!this.down) return;
    this.down = false;
    this.recoveries++;
    for (const cb of this.listeners) cb();
  }

  private fail(): void {
    this.down = true;
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => void this.probe(), this.probeDelay);
    this.probeDelay = Math.min(30_000, this.probeDelay * 2);
  }

  private async probe(): Promise<void> {
    try {
      // no-cors: /healthz carries no CORS headers for an API on another origin; any answer at all will do
      const res = await globalThis.fetch(`${this.base}/healthz`, { cache: "no-store", mode: "no-cors" });
      if (res.type === "opaque" || res.status < 500) return this.up();
    } catch {
      // still unreachable: fail() below sets the next try
    }
    this.fail();
  }
}

/** No answer at all, or a gateway or backend outage: worth showing only until the connection is back. */
export function isTransient(err: unknown): boolean {
  if (err instanceof FlockError)
    return err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504;
  return err instanceof TypeError;
}

export const net = new Net();
