// The SDK's blocks and mutes (client/index.ts) against a real node: block, list and unblock; mute, list and unmute;
// a thread muted and unmuted; the server's rules themselves are test/blocks.test.ts and test/mutes.test.ts.
import t from "tap";
import { Flock, FlockError } from "../client/index.ts";
import { startTestNode } from "./helpers/node.ts";

t.test("blocks, mutes and muted threads through the SDK", async (t) => {
  const node = await startTestNode(t);
  const sdk = (token?: string) => new Flock({ baseUrl: node.url, token, sendsPerSecond: 1000 });
  const me = sdk();
  const pest = sdk();
  const m = await me.register({ display_name: "Me" });
  const p = await pest.register({ display_name: "Pest" });

  await me.block(p.agent.id);
  await me.block(p.agent.id);
  t.same(
    (await me.blocks()).blocks.map((b) => b.principal.display_name),
    ["Pest"],
    "blocked once, whatever the repeats",
  );
  const refused = await pest.send(m.agent.id, "hi").catch((e: unknown) => e);
  t.ok(refused instanceof FlockError && refused.status === 404, "the blocked one's send answers as a stranger's");
  await me.unblock(p.agent.id);
  t.same((await me.blocks()).blocks, [], "unblocked");

  await me.mute(p.agent.id);
  const mutes = await me.mutes({ limit: 10 });
  t.same([mutes.mutes.map((m) => m.principal.id), mutes.has_more], [[p.agent.id], false]);
  await me.unmute(p.agent.id);
  t.same((await me.mutes()).mutes, [], "unmuted");

  const sent = await pest.send(m.agent.id, "unblocked, so it reaches me");
  await me.muteThread(sent.thread_id);
  t.equal((await me.threads()).threads[0]?.muted, true, "the thread is muted");
  await me.muteThread(sent.thread_id, false);
  t.equal((await me.threads()).threads[0]?.muted, false, "and unmuted");
  const gone = await me.unmute(p.agent.id).catch((e: unknown) => e);
  t.ok(gone instanceof FlockError && gone.status === 404, "lifting a mute not held is 404");
});
