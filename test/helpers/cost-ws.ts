// The WebSocket part of the adversarial-cost suite (test/cost-ws.test.ts): a small client of /v1/ws (the `ws`
// package, JSON or MessagePack frames) and the walk of every client frame type of schema/ws.ts: each string, array
// and object field of each frame sent long and hostile values up to and past the 64 KiB frame cap, each frame
// measured from its sending until the node answered the ping sent right after it (frames are taken in order).
import { decode, encode } from "@msgpack/msgpack";
import WebSocket from "ws";
import { z } from "zod";
import { ClientFrame, WS_CLOSE } from "../../schema/ws.ts";
import {
  climb,
  familiesFor,
  FAMILIES,
  type JsonSchema,
  type Ledger,
  type Meter,
  objectLadder,
  ofBytes,
  pathName,
  REQUEST_TIMEOUT_MS,
  sampleOf,
  slotsOf,
  stringLadders,
  toJson,
  type Variant,
  withValue,
} from "./cost.ts";
import { until } from "./wait.ts";

/** The node's frame cap (runtime/ws/session.ts MAX_FRAME). */
export const FRAME_CAP = 64 * 1024;
/** Frame string sizes in UTF-8 bytes, about 3x apart, to just under and just past the frame cap. */
export const FRAME_LADDER = [1_000, 3_000, 8_000, 20_000, FRAME_CAP - 1_000, FRAME_CAP + 1_000];

interface Frame {
  type?: unknown;
  ref?: unknown;
  error?: unknown;
  message?: unknown;
}

/** One connection to /v1/ws, keeping every frame it got and how it closed. */
export class Sock {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;

  private constructor(
    readonly ws: WebSocket,
    readonly encoding: "json" | "msgpack",
  ) {
    ws.on("message", (data: Buffer, binary: boolean) => {
      try {
        this.frames.push((binary ? decode(data) : JSON.parse(data.toString())) as Frame);
      } catch {
        this.frames.push({ type: "(undecodable)" });
      }
    });
    ws.on("close", (code: number, reason: Buffer) => (this.closed = { code, reason: reason.toString() }));
  }

  static open(base: string, encoding: "json" | "msgpack", token?: string): Promise<Sock> {
    const ws = new WebSocket(
      base.replace(/^http/, "ws") + "/v1/ws",
      [encoding === "json" ? "flock.json" : "flock.msgpack"],
      {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        maxPayload: 16 * 1024 * 1024,
      },
    );
    ws.on("error", () => {}); // a close follows; it is what the cases look at
    const s = new Sock(ws, encoding);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(s));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once("close", (code) => reject(new Error(`closed before open: ${code}`)));
    });
  }

  /** Sends a frame as this connection's encoding (a string: as is, as text). */
  send(frame: unknown): void {
    if (typeof frame === "string") this.ws.send(frame);
    else this.ws.send(this.encoding === "msgpack" ? encode(frame) : toJson(frame));
  }

  /** Waits for a frame matching `pred` (after index `from`) or the close; the frame, or undefined once closed. */
  async next(pred: (f: Frame) => boolean, from = 0, ms = REQUEST_TIMEOUT_MS): Promise<Frame | undefined> {
    let found: Frame | undefined;
    await until(
      () => {
        found = this.frames.slice(from).find(pred);
        return found !== undefined || this.closed !== undefined;
      },
      { ms, what: "a frame or the close", every: 1 },
    );
    return found;
  }

  close(): void {
    this.ws.terminate();
  }
}

/** Close codes a hostile frame may end a connection with: too large, a typing flood. Anything else is a failure. */
const EXPECTED_CLOSES: readonly number[] = [WS_CLOSE.tooLarge, WS_CLOSE.typingFlood];

/** Why a frame's outcome breaks the contract: an error frame not in the shape, an internal error, a close of another kind. */
function badOutcome(
  frames: Frame[],
  closed: { code: number } | undefined,
  expectClose: readonly number[],
): string | undefined {
  for (const f of frames) {
    if (f.type !== "error") continue;
    if (typeof f.error !== "string" || typeof f.message !== "string")
      return `an error frame not in the shape: ${JSON.stringify(f).slice(0, 200)}`;
    if (f.error === "internal" || f.error === "unavailable")
      return `an error frame ${f.error}: ${String(f.message).slice(0, 200)}`;
  }
  if (closed && !expectClose.includes(closed.code)) return `closed with ${closed.code}`;
  return undefined;
}

export interface WsWalkOptions {
  /** String families per field (familiesFor). */
  perField: number;
  /** Also walk each string field over MessagePack (with one family). */
  msgpack: boolean;
}

/** Walks every client frame type; returns the frame types walked. */
export async function walkFrames(
  base: string,
  token: string,
  meter: Meter,
  ledger: Ledger,
  opts: WsWalkOptions,
): Promise<string[]> {
  const schema = z.toJSONSchema(ClientFrame, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const frames = [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])];
  let fields = 0;
  let probe = 0;
  const conns: Partial<Record<"json" | "msgpack", Sock>> = {};
  const conn = async (encoding: "json" | "msgpack") => {
    let c = conns[encoding];
    if (!c || c.closed) {
      c = await Sock.open(base, encoding, token);
      await c.next((f) => f.type === "ready");
      conns[encoding] = c;
    }
    return c;
  };

  /** An authenticated frame: sent, then a ping; measured until its pong (or the close). */
  const sendFrame = async (
    target: string,
    what: string,
    frame: unknown,
    encoding: "json" | "msgpack",
  ): Promise<boolean> => {
    const c = await conn(encoding);
    const ref = `probe-${++probe}`;
    const from = c.frames.length;
    const { value: pong, cost } = await meter.measure(async () => {
      c.send(frame);
      c.send({ type: "ping", ref });
      return c.next((f) => f.type === "pong" && f.ref === ref, from);
    });
    const failure =
      badOutcome(c.frames.slice(from), c.closed, EXPECTED_CLOSES) ?? (pong || c.closed ? undefined : "no pong");
    return ledger.add(target, `${encoding} ${what} → ${c.closed ? `closed ${c.closed.code}` : "pong"}`, cost, failure);
  };

  /** An auth frame on a connection that carried no credentials: measured until ready, an error or the close. */
  const sendAuth = async (what: string, frame: unknown): Promise<boolean> => {
    const c = await Sock.open(base, "json");
    try {
      const { cost } = await meter.measure(() => {
        c.send(frame);
        return c.next((f) => f.type === "ready" || f.type === "error");
      });
      return ledger.add(
        "auth",
        `json ${what} → ${c.closed ? `closed ${c.closed.code}` : String(c.frames.at(-1)?.type)}`,
        cost,
        badOutcome(c.frames, c.closed, [...EXPECTED_CLOSES, WS_CLOSE.unauthorized]),
      );
    } finally {
      c.close();
    }
  };

  const walked: string[] = [];
  for (const f of frames) {
    const type = String(f.properties?.["type"]?.const ?? "?");
    walked.push(type);
    const frameBase = sampleOf(f, { type, token, thread_id: "thread_1", id: "msg_1", state: "stop" });
    const send = (what: string, v: unknown, encoding: "json" | "msgpack" = "json") =>
      type === "auth" ? sendAuth(what, v) : sendFrame(type, what, v, encoding);
    for (const slot of slotsOf(f)) {
      const at = pathName(slot.path);
      if (slot.path[0] === "type") continue; // the discriminator: a long one is an unknown type, sent below
      let ladders: Variant[][];
      if (slot.kind === "string") {
        const families = familiesFor(fields++, opts.perField);
        ladders = stringLadders(slot.schema, FRAME_LADDER).filter((_, i) => families.includes(FAMILIES[i]!));
      } else if (slot.kind === "object")
        ladders = objectLadder(FRAME_CAP - 1_000)
          .filter((v) => !v.what.includes("deep") || v.what.includes("33") || v.what.includes("5,000"))
          .map((v) => [v]);
      else ladders = [];
      await climb(ladders, (v) => send(`${at} ${v.what}`, withValue(frameBase, slot.path, v.value)));
      if (opts.msgpack && slot.kind === "string" && type !== "auth") {
        await climb([stringLadders(slot.schema, FRAME_LADDER)[1]!], (v) =>
          send(`${at} ${v.what}`, withValue(frameBase, slot.path, v.value), "msgpack"),
        );
      }
    }
  }
  // frames of no known type and no frame at all: long unknown types, long text that is not JSON, binary junk
  const junk = FAMILIES.slice(0, 3).map((fam) =>
    FRAME_LADDER.map((b): Variant => ({ what: `type ${fam.name} ${b} B`, value: { type: ofBytes(fam, b) } })),
  );
  await climb(junk, (v) => sendFrame("(unknown type)", v.what, v.value, "json"));
  await climb(
    FAMILIES.slice(0, 3).map((fam) =>
      FRAME_LADDER.map((b): Variant => ({ what: `not JSON: ${fam.name} ${b} B`, value: ofBytes(fam, b) })),
    ),
    (v) => sendFrame("(not JSON)", v.what, v.value, "json"),
  );
  for (const c of Object.values(conns)) c?.close();
  return walked;
}
