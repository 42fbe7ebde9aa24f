// The parts of a message that are pure functions: which reactions a message shows and in what order, what an emoji
// may be, and which names are safe to show.
import t from "tap";
import { displayName } from "../../schema/common.ts";
import { Emoji, REACTION_BY_SHOWN } from "../../schema/messages.ts";
import { reactionsOf, toMessage } from "../../runtime/messaging/payload.ts";

t.test(
  "reactions: the most used first, then by emoji; at most REACTION_BY_SHOWN reactors shown, the count exact",
  async (t) => {
    const many = Array.from({ length: 30 }, (_, i) => String(1000 + i));
    t.same(reactionsOf({ "🎉": ["1"], "👍": ["2", "3"], "❤️": ["4"], "🙈": [] }), [
      { emoji: "👍", count: 2, by: ["2", "3"] },
      { emoji: "❤️", count: 1, by: ["4"] },
      { emoji: "🎉", count: 1, by: ["1"] },
    ]);
    const [big] = reactionsOf({ "✅": many });
    t.equal(big!.count, 30);
    t.same(big!.by, many.slice(0, REACTION_BY_SHOWN));
  },
);

t.test("a tombstone shows no body, files, reactions or quote", async (t) => {
  const row = {
    id: 5n,
    thread_id: 7n,
    sender: "1",
    sender_name: "Ann",
    recipient: "2",
    body: "secret",
    created_at: new Date(0),
    attachments: [{ id: "file_1", name: "a.txt", content_type: "text/plain", size: 1 }],
    reactions: { "👍": ["2"] },
    reply: { id: "msg_3", from: { id: "2", display_name: "Bob", avatar_url: null }, body: "q" },
  };
  const live = toMessage(row);
  t.equal(live.body, "secret");
  t.equal(live.reactions?.length, 1);
  t.equal(live.reply_to?.id, "msg_3");
  const gone = toMessage({ ...row, deleted_at: new Date(1000) });
  t.equal(gone.body, "");
  t.equal(gone.deleted_at, new Date(1000).toISOString());
  t.notOk("attachments" in gone || "reactions" in gone || "reply_to" in gone);
});

t.test("an emoji: one pictograph with its modifiers and joiners, a flag, a keycap, or a :short_name:", async (t) => {
  for (const ok of ["👍", "👍🏽", "❤️", "👨‍👩‍👧‍👦", "🇫🇷", "1️⃣", "🏳️‍🌈", ":ship_it:", ":+1:"])
    t.ok(Emoji.safeParse(ok).success, `takes ${ok}`);
  for (const bad of ["", "a", "ok", "1", "👍 ", " 👍", "a👍", ":Caps:", "::", ":a b:", "👍".repeat(40), "\u202E👍"]) {
    t.notOk(Emoji.safeParse(bad).success, `refuses ${JSON.stringify(bad)}`);
  }
});

t.test("a name to show: any script, no controls or direction overrides", async (t) => {
  const name = displayName(64);
  for (const ok of ["Ann", "مرحبا", "名前", "Zoë 👋", "👨\u200D👩\u200D👧"])
    t.ok(name.safeParse(ok).success, `takes ${ok}`);
  for (const bad of [
    "gpj\u202Eexe.doc",
    "a\u2066b",
    "a\u200Db",
    "a\nb",
    "a\u0000",
    "a\u0085b",
    "",
    "   ",
    "x".repeat(65),
  ]) {
    t.notOk(name.safeParse(bad).success, `refuses ${JSON.stringify(bad)}`);
  }
  t.equal(name.parse("  Ann  "), "Ann", "trimmed");
});
