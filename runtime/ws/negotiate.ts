// Reading credentials and the encoding from a WebSocket upgrade request. The token may come from the
// Authorization header or a `bearer.<token>` subprotocol (browsers cannot set headers); when neither is
// there the client authenticates with its first frame. Browsers insist that the server selects one of
// the offered subprotocols: the first encoding protocol offered (a client that takes lean message frames offers
// `flock.json.lean` before `flock.json`, so a server without them selects the second), else the bearer one itself.
import { WS_PROTOCOL } from "../../schema/ws.ts";
import { type Codec, jsonCodec, jsonLeanCodec, msgpackCodec, msgpackLeanCodec } from "./codec.ts";

interface Negotiated {
  token: string | null;
  /** The frames' encoding: the first encoding protocol offered, JSON when none is. */
  codec: Codec;
  /** The subprotocol to answer with ("" for none). */
  selected: string;
}

/** The codec of each encoding subprotocol (the lean ones: lean message frames, schema/ws.ts). */
const CODECS: ReadonlyMap<string, Codec> = new Map([
  [WS_PROTOCOL.json, jsonCodec],
  [WS_PROTOCOL.msgpack, msgpackCodec],
  [WS_PROTOCOL.jsonLean, jsonLeanCodec],
  [WS_PROTOCOL.msgpackLean, msgpackLeanCodec],
]);

/** Read the upgrade's credentials and encoding (one pass over the offered protocols, run on every connect). */
export function negotiate(authorization: string, protocols: string): Negotiated {
  let bearer: string | undefined;
  let encoding: string | undefined;
  let codec: Codec | undefined;
  if (protocols !== "") {
    for (const part of protocols.split(",")) {
      const p = part.trim();
      if (bearer === undefined && p.startsWith(WS_PROTOCOL.bearerPrefix)) bearer = p;
      else if (codec === undefined && CODECS.has(p)) {
        encoding = p;
        codec = CODECS.get(p);
      }
    }
  }
  // a malformed Authorization header is kept as the token, so it is refused rather than ignored
  const header = authorization ? (/^Bearer +(\S+)\s*$/i.exec(authorization)?.[1] ?? authorization) : null;
  return {
    token: header ?? (bearer ? bearer.slice(WS_PROTOCOL.bearerPrefix.length) : null),
    codec: codec ?? jsonCodec,
    selected: encoding ?? bearer ?? "",
  };
}
