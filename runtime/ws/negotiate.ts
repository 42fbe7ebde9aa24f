// Reading credentials and the encoding from a WebSocket upgrade request. The token may come from the
// Authorization header or a `bearer.<token>` subprotocol (browsers cannot set headers); when neither is
// there the client authenticates with its first frame. Browsers insist that the server selects one of
// the offered subprotocols: an encoding protocol when one is offered, else the bearer one itself.
import { WS_PROTOCOL } from "../../schema/ws.ts";

interface Negotiated {
  token: string | null;
  codec: "json" | "msgpack";
  /** The subprotocol to answer with ("" for none). */
  selected: string;
}

export function negotiate(authorization: string, protocols: string): Negotiated {
  const offered = protocols
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  const bearer = offered.find((p) => p.startsWith(WS_PROTOCOL.bearerPrefix));
  const encoding = offered.find((p) => p === WS_PROTOCOL.msgpack || p === WS_PROTOCOL.json);
  // a malformed Authorization header is kept as the token, so it is refused rather than ignored
  const header = authorization ? (/^Bearer +(\S+)\s*$/i.exec(authorization)?.[1] ?? authorization) : null;
  return {
    token: header ?? (bearer ? bearer.slice(WS_PROTOCOL.bearerPrefix.length) : null),
    codec: encoding === WS_PROTOCOL.msgpack ? "msgpack" : "json",
    selected: encoding ?? bearer ?? "",
  };
}
