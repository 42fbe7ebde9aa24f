// Frame encodings of the WebSocket channel: JSON text (default) or MessagePack binary (subprotocol
// `flock.msgpack`). Message frames are built from the stored JSON payload: spliced as text for JSON,
// decoded once and re-encoded for MessagePack.
import { decode, encode } from "@msgpack/msgpack";
import { withDeliveryCount } from "../messaging/payload.ts";
import type { ServerFrame } from "../../schema/ws.ts";

export type Encoded = { data: string | Uint8Array; binary: boolean };

export interface Codec {
  readonly name: "json" | "msgpack";
  /** Parse one client frame; throws on bytes that are not a frame of this encoding. */
  decode(data: ArrayBuffer): unknown;
  encode(frame: ServerFrame): Encoded;
  /** A `message` frame from a stored payload and its delivery count. */
  encodeMessage(payload: string, deliveryCount: number): Encoded;
}

export const jsonCodec: Codec = {
  name: "json",
  decode(data) {
    return JSON.parse(Buffer.from(data).toString("utf8"));
  },
  encode(frame) {
    return { data: JSON.stringify(frame), binary: false };
  },
  encodeMessage(payload, deliveryCount) {
    return { data: `{"type":"message","message":${withDeliveryCount(payload, deliveryCount)}}`, binary: false };
  },
};

export const msgpackCodec: Codec = {
  name: "msgpack",
  decode(data) {
    return decode(new Uint8Array(data));
  },
  encode(frame) {
    return { data: encode(frame, { ignoreUndefined: true }), binary: true };
  },
  encodeMessage(payload, deliveryCount) {
    const message = { ...(JSON.parse(payload) as Record<string, unknown>), delivery_count: deliveryCount };
    return { data: encode({ type: "message", message }), binary: true };
  },
};
