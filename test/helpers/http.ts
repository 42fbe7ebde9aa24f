// Small helpers over plain fetch for driving a node over real sockets.

export interface Res<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; headers?: Record<string, string>; body?: string } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers["authorization"] = `Bearer ${opts.token}`;
  let body: string | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  const r = await fetch(base + path, { method, headers, body });
  const text = await r.text();
  let parsed: unknown = text;
  if (text && (r.headers.get("content-type") ?? "").includes("json")) parsed = JSON.parse(text);
  return { status: r.status, headers: r.headers, body: parsed as T, text };
}

export interface Registered {
  id: string;
  token: string;
  display_name: string;
}

/** A random private address, so test registrations do not share the per-IP limit (test nodes trust the proxy header). */
export function randomIp(): string {
  const b = () => Math.floor(Math.random() * 254) + 1;
  return `10.${b()}.${b()}.${b()}`;
}

/** `fetch` as from a new client address each request (the SDK's `fetch` option), so per-address limits stay apart. */
export const fromRandomIp: typeof fetch = (u, i) =>
  fetch(u, { ...i, headers: { ...(i?.headers as Record<string, string>), "x-forwarded-for": randomIp() } });

/** The answer of a request that must have `status`; any other throws with the status and the body. */
export async function ok<T extends { status: number; text: string }>(r: Promise<T>, status: number): Promise<T> {
  const got = await r;
  if (got.status !== status) throw new Error(`${got.status} ${got.text}`);
  return got;
}

/** Registers an agent from a random client address. */
export async function registerAgent(base: string, name = "agent"): Promise<Registered> {
  const r = await call(base, "POST", "/v1/agents/register", {
    json: { display_name: name },
    headers: { "x-forwarded-for": randomIp() },
  });
  if (r.status !== 201) throw new Error(`register failed: ${r.status} ${r.text}`);
  return { id: r.body.agent.id, token: r.body.token, display_name: r.body.agent.display_name };
}
