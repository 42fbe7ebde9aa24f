// WebSocket hardening (issue 16): typing is limited and a typing flood closes the socket, a human token's expiry
// closes a live socket, an oversized frame closes with 1009, and `ref` may be a string or a number.
import t from "tap";
import { WS_CLOSE } from "../schema/ws.ts";
import { registerAgent } from "./helpers/http.ts";
import { startTestNode } from "./helpers/node.ts";
import { Client } from "./messaging-helpers.ts";

/** A JSON ping frame of exactly `bytes` bytes (padded with a field the schema ignores). */
function pingOfSize(bytes: number, ref: string): string {
  const head = `{"type":"ping","ref":"${ref}","pad":"`;
  const tail = `"}`;
  return head + "a".repeat(bytes - head.length - tail.length) + tail;
}

t.test("frame size: 64 KiB is taken, anything larger closes with 1009", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const a = await registerAgent(node.url, "Big");
  const open = async () => {
    const c = await Client.open(node.url, { token: a.token });
    t.teardown(() => c.close());
    await c.nextOfType("ready");
    return c;
  };

  t.test("a frame of exactly 64 KiB is answered", async (t) => {
    const c = await open();
    c.ws.send(pingOfSize(64 * 1024, "edge"));
    t.strictSame(await c.nextOfType("pong"), { type: "pong", ref: "edge" });
    t.equal(c.closed, null);
  });

  t.test("one byte more closes with 1009 (a close frame, not a reset)", async (t) => {
    const c = await open();
    c.ws.send(pingOfSize(64 * 1024 + 1, "over"));
    const closed = await c.waitClose();
    t.equal(closed.code, WS_CLOSE.tooLarge);
    t.notOk(c.frames.some((f) => f.type === "pong"), "the frame was not carried out");
  });

  t.test("a binary frame of 200 KiB closes with 1009", async (t) => {
    const c = await open();
    c.ws.send(Buffer.alloc(200 * 1024, 0x90));
    t.equal((await c.waitClose()).code, WS_CLOSE.tooLarge);
  });

  t.test("a message over 64 KiB in fragments closes with 1009", async (t) => {
    const c = await open();
    const whole = pingOfSize(96 * 1024, "frag");
    c.ws.send(whole.slice(0, 40 * 1024), { fin: false });
    c.ws.send(whole.slice(40 * 1024), { fin: true });
    t.equal((await c.waitClose()).code, WS_CLOSE.tooLarge);
  });
});

