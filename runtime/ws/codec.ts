// Frame encodings of the WebSocket channel: JSON text (default) or MessagePack binary (subprotocol
// `flock.msgpack`), each with full or lean message frames (`flock.json.lean`, `flock.msgpack.lean`: schema/ws.ts,
// LeanMessage). Message frames are built from the stored JSON payload: spliced as text for full JSON, decoded once
// and re-encoded for the others; each is built once per message and shared by every socket it goes to
// (runtime/messaging/channels.ts).
import { decode, encode } from "@msgpack/msgpack";
import { withDeliveryCount } from "../messaging/payload.ts";
import { PREFIX } from "../ids.ts";
import type { ServerFrame } from "../../schema/ws.ts";

export type Encoded = { data: string | Uint8Array; binary: boolean };

export interface Codec {
  /** The encoding and message frames (keys a message's shared frames and a stream's uWS topic). */
  readonly name: "json" | "msgpack" | "json.lean" | "msgpack.lean";
  /** The encoding alone, as the ready frame names it. */
  readonly encoding: "json" | "msgpack";
  /** Parse one client frame; throws on bytes that are not a frame of this encoding. */
  decode(data: ArrayBuffer): unknown;
  encode(frame: ServerFrame): Encoded;
  /** A `message` frame from a stored payload and its delivery count. */
  encodeMessage(payload: string, deliveryCount: number): Encoded;
}

type Json = Record<string, unknown>;

/** An author without a null picture (absent in a lean frame means null). */
function leanAuthor(a: Json): Json {
  if (a["avatar_url"] !== null) return a;
  const { avatar_url: _, ...rest } = a;
  return rest;
}

/**
 * A stored message as a lean frame carries it (schema/ws.ts, LeanMessage): no field whose value is null, none the
 * receiver knows already. A group message keeps `to` (the group) and drops `thread_id` (the same number); a direct
 * message keeps `thread_id` and drops `to` (the receiver itself: an inbox's frames go to its principal's sockets
 * only). An attachment's `url` (`/v1/files/<id>`) and `delivery_count` 1 are dropped too.
 */
export function leanMessage(payload: string, deliveryCount: number): Json {
  const m = JSON.parse(payload) as Json;
  const to = m["to"] as string;
  const thread = m["thread_id"] as string;
  const group = to === PREFIX.group + thread.slice(PREFIX.thread.length);
  const out: Json = {};
  for (const k in m) {
    const v = m[k];
    if (k === "thread_id") {
      if (!group) out[k] = v;
    } else if (k === "to") {
      if (group) out[k] = v;
    } else if (k === "from") out[k] = leanAuthor(v as Json);
    else if (k === "reply_to") out[k] = { ...(v as Json), from: leanAuthor((v as Json)["from"] as Json) };
    else if (k === "attachments") {
      out[k] = (v as Json[]).map((a) => {
        if (a["url"] !== `/v1/files/${a["id"] as string}`) return a;
        const { url: _, ...rest } = a;
        return rest;
      });
    } else if (k === "payment" && (v as Json)["explorer_url"] === null) {
      const { explorer_url: _, ...rest } = v as Json;
      out[k] = rest;
    } else if (v !== null) out[k] = v;
  }
  if (deliveryCount !== 1) out["delivery_count"] = deliveryCount;
  return out;
}

const jsonDecode = (data: ArrayBuffer): unknown => JSON.parse(Buffer.from(data).toString("utf8"));
const jsonEncode = (frame: ServerFrame): Encoded => ({ data: JSON.stringify(frame), binary: false });
const msgpackDecode = (data: ArrayBuffer): unknown => decode(new Uint8Array(data));
const msgpackEncode = (frame: ServerFrame): Encoded => ({
  data: encode(frame, { ignoreUndefined: true }),
  binary: true,
});

export const jsonCodec: Codec = {
  name: "json",
  encoding: "json",
  decode: jsonDecode,
  encode: jsonEncode,
  encodeMessage(payload, deliveryCount) {
    return { data: `{"type":"message","message":${withDeliveryCount(payload, deliveryCount)}}`, binary: false };
  },
};

export const msgpackCodec: Codec = {
  name: "msgpack",
  encoding: "msgpack",
  decode: msgpackDecode,
  encode: msgpackEncode,
  encodeMessage(payload, deliveryCount) {
    const message = { ...(JSON.parse(payload) as Json), delivery_count: deliveryCount };
    return { data: encode({ type: "message", message }), binary: true };
  },
};

/** JSON frames, message frames lean (`flock.json.lean`). */
export const jsonLeanCodec: Codec = {
  name: "json.lean",
  encoding: "json",
  decode: jsonDecode,
  encode: jsonEncode,
  encodeMessage(payload, deliveryCount) {
    return {
      data: `{"type":"message","message":${JSON.stringify(leanMessage(payload, deliveryCount))}}`,
      binary: false,
    };
  },
};

/** MessagePack frames, message frames lean (`flock.msgpack.lean`). */
export const msgpackLeanCodec: Codec = {
  name: "msgpack.lean",
  encoding: "msgpack",
  decode: msgpackDecode,
  encode: msgpackEncode,
  encodeMessage(payload, deliveryCount) {
    return { data: encode({ type: "message", message: leanMessage(payload, deliveryCount) }), binary: true };
  },
};
