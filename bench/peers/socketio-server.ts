// Socket.IO 4.8 with @socket.io/redis-adapter, as the fan-out bench's peer: every socket joins one room and is
// told "joined"; POST /pub with {"body": payload} broadcasts it to the room as an "m" event (through the adapter's Redis
// pub/sub, as a scaled-out deployment would). Loaded from the bench's peers folder (PEERS_DIR). Prints {"port": N}.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";

const need = createRequire(join(process.env["PEERS_DIR"]!, "package.json"));
interface Room {
  emit(event: string, ...args: unknown[]): void;
}
interface Socket extends Room {
  join(room: string): unknown;
}
interface IoServer {
  to(room: string): Room;
  on(event: "connection", fn: (s: Socket) => void): void;
}
const { Server } = need("socket.io") as { Server: new (http: unknown, opts: object) => IoServer };
const { createAdapter } = need("@socket.io/redis-adapter") as {
  createAdapter: (pub: unknown, sub: unknown, opts: object) => never;
};
const { Redis } = need("ioredis") as { Redis: new (url: string) => { duplicate(): unknown } };

const pub = new Redis(process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379");
const sub = pub.duplicate();
const http = createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/pub") {
    res.writeHead(404).end();
    return;
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (d: string) => (body += d));
  req.on("end", () => {
    io.to("all").emit("m", (JSON.parse(body) as { body: string }).body);
    res.writeHead(204).end();
  });
});
const io = new Server(http, {
  transports: ["websocket"],
  adapter: createAdapter(pub, sub, { key: process.env["PEERS_KEY"] ?? "bench-sio" }),
});
io.on("connection", (socket) => {
  void socket.join("all");
  socket.emit("joined");
});
http.listen(0, "127.0.0.1", () => {
  const addr = http.address();
  process.stdout.write(`${JSON.stringify({ port: typeof addr === "object" && addr ? addr.port : 0 })}\n`);
});
