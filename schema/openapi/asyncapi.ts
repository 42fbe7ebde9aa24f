// The WebSocket protocol at /v1/ws as an AsyncAPI 3 document, generated from the frame schemas of schema/ws.ts:
// the server receives the client frames and sends the server frames, on one channel.
import type { z } from "zod";
import { ClientFrame, ServerFrame, WS_CLOSE, WS_PROTOCOL } from "../ws.ts";
import { buildComponents, exportedNames, type JsonSchema } from "./components.ts";

export type AsyncApiDocument = JsonSchema & { asyncapi: "3.0.0" };

const SCHEMAS = "#/components/schemas/";

const frameName = (names: Map<z.ZodType, string>, f: z.ZodType) => {
  const name = names.get(f);
  if (!name) throw new Error("a WebSocket frame schema is not exported from schema/ws.ts");
  return name;
};

export function buildAsyncApiDocument(version = "1.0.0"): AsyncApiDocument {
  const names = exportedNames();
  const client = ClientFrame.options as readonly z.ZodType[];
  const server = ServerFrame.options as readonly z.ZodType[];
  const inbound = buildComponents(new Map(client.map((f) => [f, undefined])), {
    prefix: SCHEMAS,
    io: "input",
    target: "draft-07",
  });
  const outbound = buildComponents(new Map(server.map((f) => [f, undefined])), {
    prefix: SCHEMAS,
    io: "output",
    target: "draft-07",
  });

  const messages: Record<string, JsonSchema> = {};
  const channelMessages: Record<string, JsonSchema> = {};
  const operations: Record<string, JsonSchema> = {};
  const describe = (frames: readonly z.ZodType[], action: "receive" | "send", ref: (s: z.ZodType) => JsonSchema) => {
    for (const f of frames) {
      const name = frameName(names, f);
      messages[name] = { name, title: name, contentType: "application/json", payload: ref(f) };
      channelMessages[name] = { $ref: `#/components/messages/${name}` };
      operations[`${action}${name}`] = {
        action,
        title: `${action === "receive" ? "Client sends" : "Server sends"} ${name}`,
        channel: { $ref: "#/channels/ws" },
        messages: [{ $ref: `#/channels/ws/messages/${name}` }],
      };
    }
  };
  describe(client, "receive", inbound.ref);
  describe(server, "send", outbound.ref);

  const closeCodes = Object.entries(WS_CLOSE)
    .map(([k, v]) => `${v} (${k})`)
    .join(", ");
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Flock WebSocket",
      version,
      description:
        "One channel per connection at /v1/ws. Authenticate with `Authorization: Bearer <token>` on the upgrade, with a " +
        `\`${WS_PROTOCOL.bearerPrefix}<token>\` subprotocol, or with an \`auth\` frame first (within 10 s). Frames are JSON text ` +
        `(\`${WS_PROTOCOL.json}\`) or MessagePack binary (\`${WS_PROTOCOL.msgpack}\`), the same shapes in both. ` +
        `\`${WS_PROTOCOL.jsonLean}\` and \`${WS_PROTOCOL.msgpackLean}\` are the same encodings with lean message frames: ` +
        "no field the receiver knows or can fill in (a group message's `thread_id`, a direct message's `to`, a null " +
        "`avatar_url`, a file's `url`, a `delivery_count` of 1; the SDK rebuilds the full message). A client offering a " +
        "lean one offers its full one after it; the server selects the first it supports. " +
        "Messages come unacknowledged first; acknowledge each with an `ack` frame (or POST /v1/messages/{id}/ack), or it comes " +
        "again. Besides messages the server sends events, none to acknowledge: presence, typing, read markers, edits " +
        "(`message_update`), friend requests, friendships made or ended (`friendship`), moments published by friends " +
        "(`moment`) and the new like and comment counts of moments the client may see (`moment_counts`). " +
        `Close codes: ${closeCodes}. The REST API: /v1/openapi.json.`,
    },
    defaultContentType: "application/json",
    channels: {
      ws: {
        address: "/v1/ws",
        title: "The connection",
        messages: channelMessages,
        bindings: {
          ws: {
            method: "GET",
            headers: {
              type: "object",
              properties: {
                Authorization: { type: "string", description: "Bearer <token>" },
                "Sec-WebSocket-Protocol": { type: "string" },
              },
            },
          },
        },
      },
    },
    operations,
    components: { schemas: { ...outbound.schemas, ...inbound.schemas }, messages },
  };
}
