// Where this node can reach its own API over loopback (the MCP endpoint's tools call it with the caller's token).
// Known once the node listens: the listen step sets it from the port it actually got (PORT=0 picks one).
export class SelfAddress {
  private base: string | undefined;

  /** The node's own base URL, or undefined before it listens. */
  get url(): string | undefined {
    return this.base;
  }

  set(host: string, port: number): void {
    const h =
      host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
    this.base = `http://${h}:${port}`;
  }
}
