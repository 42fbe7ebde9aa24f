// Lean message frames (runtime/ws/codec.ts, leanMessage) and the SDK's filling in (client/ws.ts, fullMessage): for
// messages with every optional part, the full message comes back exactly, fields in order; nothing null is sent.
import t from "tap";
import { decode } from "@msgpack/msgpack";
import { fullMessage } from "../../client/ws.ts";
import { freshPayload, withDeliveryCount } from "../../runtime/messaging/payload.ts";
import { jsonCodec, jsonLeanCodec, leanMessage, msgpackLeanCodec } from "../../runtime/ws/codec.ts";
import { LeanMessage } from "../../schema/ws.ts";

const created = new Date("2026-12-02T07:15:03.123Z");
const plain = { id: "7", displayName: "Ada", avatarKey: null };
const pictured = { id: "P8", displayName: "Bo", avatarKey: "k_abcdefghijklmnopqrstuv" };
const base = { id: 900n, threadId: 55n, body: "hello", createdAt: created };
const cases: [string, string, string][] = [
  ["direct, no avatar", freshPayload(plain, { ...base, recipient: "P8" }), "P8"],
  ["group, no avatar", freshPayload(plain, { ...base, recipient: null }), "P8"],
  ["direct, with an avatar", freshPayload(pictured, { ...base, recipient: "7" }), "7"],
  [
    "group reply with files, a paid message without an explorer, edited, reacted",
    freshPayload(
      plain,
      {
        ...base,
        recipient: null,
        attachments: [{ id: "file_3", name: "a.png", content_type: "image/png", size: 10 }],
        reply: { id: "msg_899", from: { id: "P8", display_name: "Bo", avatar_url: null }, body: "q" },
      },
      {
        pay_tx: "0xabc",
        pay_network: "eip155:31337",
        pay_payer: "0x00000000000000000000000000000000000000aa",
        pay_amount: "5",
        pay_explorer: null,
        edited_at: created,
        reactions: { "👍": ["P8"] },
      },
    ),
    "P8",
  ],
  [
    "direct, paid with an explorer, a quote with an avatar",
    freshPayload(
      plain,
      {
        ...base,
        recipient: "P8",
        reply: { id: "msg_899", from: { id: "P8", display_name: "Bo", avatar_url: "/v1/avatars/x" }, body: "q" },
      },
      { pay_tx: "0xabc", pay_network: "n", pay_payer: null, pay_amount: "5", pay_explorer: "https://e/tx/0xabc" },
    ),
    "P8",
  ],
];

for (const [name, payload, receiver] of cases) {
  t.test(name, async (t) => {
    for (const count of [1, 3]) {
      const full = JSON.parse(withDeliveryCount(payload, count)) as Record<string, unknown>;
      const lean = leanMessage(payload, count);
      t.ok(LeanMessage.safeParse(lean).success, "a LeanMessage");
      t.notOk(JSON.stringify(lean).includes("null"), "nothing null");
      t.ok(!("to" in lean && "thread_id" in lean), "one of to and thread_id");
      const back = fullMessage(lean, receiver);
      t.same(back, full, `count ${count}: the full message again`);
      t.equal(JSON.stringify(back), JSON.stringify(full), "its fields in the same order");
      t.equal(fullMessage(full, receiver), full, "a full frame's message is taken as it is");
      const frame = (e: { data: string | Uint8Array }) => e.data.length;
      t.ok(frame(jsonLeanCodec.encodeMessage(payload, count)) < frame(jsonCodec.encodeMessage(payload, count)));
      t.same(
        (decode(msgpackLeanCodec.encodeMessage(payload, count).data as Uint8Array) as { message: unknown }).message,
        lean,
      );
    }
  });
}
