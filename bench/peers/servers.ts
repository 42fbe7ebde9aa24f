// The servers the fan-out bench compares, each behind one shape: start it, say how a member connects, publish one
// payload to every member, and stop it. Bare uWS and Flock come from this repository; Socket.IO and Soketi from the
// peers folder (bench/peers/install.ts).
import { createHash, createHmac } from "node:crypto";
import { join } from "node:path";
import WebSocket from "ws";
import { freePort } from "../../deploy/local/private-servers.ts";
import { pool, registerFleet } from "../lib/fleet.ts";
import { keyHeader } from "../lib/idempotency.ts";
import { startScript } from "../lib/procs.ts";
import { RawHttp } from "../lib/raw-http.ts";
import { PEERS_DIR } from "./install.ts";
import type { Target } from "./protocol.ts";

export interface Server {
  name: string;
  pid: number;
  /** Connection targets for `members` members (Flock registers them and builds the group). */
  targets(members: number): Promise<Target[]>;
  publish(payload: string): Promise<void>;
  stop(): Promise<void>;
}

export type ServerName = "uws" | "flock" | "socketio" | "soketi";

export interface StartOptions {
  /** Where Flock's runtime/main.ts lives (another work tree measures another commit). */
  flockRoot: string;
  env: Record<string, string>;
}

export async function startServer(name: ServerName, o: StartOptions): Promise<Server> {
  if (name === "uws") return uwsServer();
  if (name === "flock") return flockServer(o);
  if (name === "socketio") return socketioServer(o);
  return soketiServer();
}

async function uwsServer(): Promise<Server> {
  const p = await startScript("bench/baseline-ws.ts", {}, /"port":(\d+)/);
  const url = `ws://127.0.0.1:${p.port}`;
  const pub = new WebSocket(url);
  await new Promise((r, j) => (pub.once("open", r), pub.once("error", j)));
  return {
    name: "bare uWS publish",
    pid: p.child.pid!,
    targets: async (n) => Array.from({ length: n }, () => ({ kind: "uws", url })),
    publish: async (payload) => pub.send(`pub:${payload}`),
    stop: async () => (pub.terminate(), p.stop()),
  };
}

async function flockServer(o: StartOptions): Promise<Server> {
  const env = { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", FLOCK_LIMITS_SCALE: "100000", ...o.env };
  const p = await startScript(join(o.flockRoot, "runtime/main.ts"), env, /"port":(\d+)[^\n]*"msg":"flock listening"/);
  const url = `http://127.0.0.1:${p.port}`;
  const http = new RawHttp(url, 4);
  let publish: (payload: string) => Promise<void> = async () => {
    throw new Error("no group yet");
  };
  return {
    name: "Flock",
    pid: p.child.pid!,
    async targets(n) {
      const fleet = await registerFleet(url, n + 1, "fan");
      const owner = fleet[0]!;
      const g = await owner.flock.createGroup({ name: "fan-out", members: [] });
      const rest = fleet.slice(1);
      const chunks = Array.from({ length: Math.ceil(rest.length / 200) }, (_, i) => rest.slice(i * 200, i * 200 + 200));
      await pool(chunks, 1, async (c) => {
        await owner.flock.http.request("POST", `/v1/groups/${g.id}/members`, { json: { members: c.map((m) => m.id) } });
      });
      publish = async (payload) => {
        const r = await http.request(
          "POST",
          `/v1/groups/${g.id}/messages`,
          owner.token,
          { body: payload },
          keyHeader(),
        );
        if (r.status !== 201) throw new Error(`group send ${r.status}: ${r.body.slice(0, 200)}`);
      };
      return rest.map((m) => ({ kind: "flock", url: `${url.replace(/^http/, "ws")}/v1/ws`, token: m.token }));
    },
    publish: (payload) => publish(payload),
    stop: async () => (http.close(), p.stop()),
  };
}

async function socketioServer(o: StartOptions): Promise<Server> {
  const env = {
    PEERS_DIR,
    PEERS_KEY: `bench-sio-${process.pid}`,
    ...(o.env["REDIS_URL"] ? { REDIS_URL: o.env["REDIS_URL"] } : {}),
  };
  const p = await startScript("bench/peers/socketio-server.ts", env, /"port":(\d+)/);
  const http = new RawHttp(`http://127.0.0.1:${p.port}`, 4);
  const module = join(PEERS_DIR, "node_modules/socket.io-client/build/esm-debug/index.js").replace("esm-debug", "esm");
  return {
    name: "Socket.IO 4.8 + Redis adapter",
    pid: p.child.pid!,
    targets: async (n) =>
      Array.from({ length: n }, () => ({ kind: "socketio", url: `http://127.0.0.1:${p.port}`, module })),
    async publish(payload) {
      const r = await http.request("POST", "/pub", undefined, { body: payload });
      if (r.status !== 204) throw new Error(`socket.io publish ${r.status}`);
    },
    stop: async () => (http.close(), p.stop()),
  };
}

const APP = { id: "bench", key: "bench-key", secret: "bench-secret" };

async function soketiServer(): Promise<Server> {
  const port = await freePort();
  const env = {
    SOKETI_PORT: String(port),
    SOKETI_HOST: "127.0.0.1",
    SOKETI_DEFAULT_APP_ID: APP.id,
    SOKETI_DEFAULT_APP_KEY: APP.key,
    SOKETI_DEFAULT_APP_SECRET: APP.secret,
    SOKETI_METRICS_ENABLED: "false",
    SOKETI_METRICS_SERVER_PORT: String(await freePort()),
  };
  const p = await startScript(
    join(PEERS_DIR, "node_modules/@soketi/soketi/bin/server.js"),
    env,
    new RegExp(`available at 127\\.0\\.0\\.1:(${port})`),
    60_000,
    ["start"],
  );
  const http = new RawHttp(`http://127.0.0.1:${port}`, 4);
  return {
    name: "Soketi 1.6",
    pid: p.child.pid!,
    targets: async (n) =>
      Array.from({ length: n }, () => ({
        kind: "soketi",
        url: `ws://127.0.0.1:${port}/app/${APP.key}?protocol=7&client=bench&version=1`,
      })),
    async publish(payload) {
      const event = { name: "m", channels: ["all"], data: payload };
      const body = JSON.stringify(event); // what RawHttp sends
      const path = `/apps/${APP.id}/events`;
      const q = `auth_key=${APP.key}&auth_timestamp=${Math.floor(Date.now() / 1000)}&auth_version=1.0&body_md5=${createHash("md5").update(body).digest("hex")}`;
      const sig = createHmac("sha256", APP.secret).update(`POST\n${path}\n${q}`).digest("hex");
      const r = await http.request("POST", `${path}?${q}&auth_signature=${sig}`, undefined, event);
      if (r.status !== 200) throw new Error(`soketi publish ${r.status}: ${r.body.slice(0, 200)}`);
    },
    stop: async () => (http.close(), p.stop()),
  };
}
