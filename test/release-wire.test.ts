// The previous release's own decoders read what this release's nodes send, and this release reads theirs: its
// runtime/ is checked out from git (test/chaos/previous-release.ts finds the release: its tag, or its CHANGELOG
// commit) under node_modules/.cache, and its CHANNELS are imported from there. Every channel both releases have is
// tried both ways with a sample (the JSON ones as they are; the stream message, whose head the older release reads
// as one origin field, by its fields). test/chaos's rolling-upgrade shows the same on live nodes, for the channels
// its traffic uses; this covers all of them.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { CHANNELS } from "../runtime/engines/node-channels.ts";
import { ROOT } from "./helpers/entry.ts";
import { previousRelease } from "./chaos/previous-release.ts";

interface Codec {
  name: string;
  encode(v: never): string;
  decode(s: string): unknown;
}

const rel = previousRelease();
const dir = join(ROOT, "node_modules", ".cache", "flock-release-wire", rel.commit);
if (!existsSync(join(dir, ".done"))) {
  mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git -C "$1" archive "$2" runtime | tar -x -C "$3"`, "sh", ROOT, rel.commit, dir]);
  writeFileSync(join(dir, ".done"), rel.commit);
}
const older = (await import(join(dir, "runtime", "engines", "node-channels.ts"))) as {
  CHANNELS: Record<string, Codec>;
};

const author = { id: "1", display_name: "a", avatar_url: "/v1/avatars/k3Jd9aQ0Vx1mZp7LbR2sTw" };
const SAMPLES: Record<string, unknown> = {
  streamMessage: { origin: "ab12", key: "g:42", seq: 7, id: "123", payload: '{"body":"a b  c"}' },
  groupMembers: { origin: "ab12", thread: "42", joined: ["1", "2"], left: [] },
  authForget: "119688131209654272",
  paymentsTerms: "119688131209654272",
  limitsBan: { ip: "192.0.2.1", until: 1_800_000_000_000 },
  presence: { ...author, status: "online" },
  typing: { thread: "thread_42", from: author, state: "start", to: ["2"] },
  friendship: { a: "1", b: "2" },
  read: { thread: "thread_42", from: author, through: "msg_7", to: ["1", "2"] },
  messageUpdate: { origin: "ab12", key: "g:42", id: "123", payload: '{"body":"edited"}', to: ["2"] },
  friendRequest: {
    to: "P2",
    request: { id: "freq_9", from: "1", to: "P2", status: "pending", created_at: "2026-11-28T08:00:00.000Z" },
    from: author,
  },
};

t.test(`${rel.version} (${rel.via}) and this release read each other's node-to-node messages`, async (t) => {
  const mine = CHANNELS as unknown as Record<string, Codec>;
  const shared = Object.keys(older.CHANNELS).filter((k) => k in mine);
  t.same(
    shared.filter((k) => !(k in SAMPLES)),
    [],
    "every channel both have is sampled here",
  );
  t.same(
    Object.keys(older.CHANNELS).filter((k) => !(k in mine)),
    [],
    `this release still hears every channel ${rel.version} speaks`,
  );
  for (const k of shared) {
    const v = SAMPLES[k] as never;
    const ours = mine[k]!;
    const theirs = older.CHANNELS[k]!;
    t.equal(theirs.name, ours.name, `${k}: the same channel name`);
    t.same(ours.decode(theirs.encode(v)), v, `${k}: ${rel.version} -> this release`);
    if (k === "streamMessage") {
      // the older release may read the head's attributes as part of the origin: it only compares it with its own
      const got = theirs.decode(
        ours.encode({
          ...(v as object),
          traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        } as never),
      ) as Record<string, unknown>;
      const { origin, ...rest } = v as Record<string, unknown>;
      t.match(got, { ...rest, origin: String }, `${k}: this release -> ${rel.version}`);
      t.ok(
        String(got["origin"]).startsWith(String(origin)),
        `${k}: its origin still names the sender (${String(got["origin"])})`,
      );
      t.not(got["origin"], "", `${k}: a non-empty origin`);
    } else {
      t.same(theirs.decode(ours.encode(v)), v, `${k}: this release -> ${rel.version}`);
    }
  }
});
