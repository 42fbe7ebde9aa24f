// Coalesced writes on a Redis connection: every command ioredis writes during one event-loop turn goes to the
// socket in one writev when the turn's I/O is done, instead of one write syscall per command. Under load (a
// turn serving many requests) that is the main saving of pipelining, with none of its machinery: commands,
// their order and their replies are exactly as without it. A quiet connection pays nothing but a setImmediate.
import type { Socket } from "node:net";
import type { Redis } from "ioredis";

const coalesced = new WeakSet<Socket>();

/** Cork each socket the client connects (again after a reconnect) on its first write of a turn. */
export function coalesceWrites(redis: Redis): void {
  redis.on("connect", () => {
    const sock = redis.stream as Socket;
    if (coalesced.has(sock)) return;
    coalesced.add(sock);
    let corked = false;
    const flush = () => {
      corked = false;
      sock.uncork();
    };
    const write = sock.write;
    sock.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
      if (!corked) {
        corked = true;
        sock.cork();
        setImmediate(flush);
      }
      return write.apply(this, args);
    } as Socket["write"];
  });
}
