// IP bans in the limiter on the memory engines: only addresses become keys, a ban event is JSON and never outlasts
// FLOCK_BAN_SECONDS, and the maps that hold strikes and bans are swept. Across nodes: test/bans.test.ts.
import t from "tap";
import { createMemoryEngines } from "../../runtime/engines/memory/index.ts";
import { MemoryLimits } from "../../runtime/engines/memory/limits.ts";
import type { ApiError } from "../../runtime/errors.ts";
import { Limiter } from "../../runtime/limits/limiter.ts";
import { PROTOCOL } from "../../runtime/release.ts";

const BAN_MS = 120_000;
const RULE = { strikes: 3, windowMs: 10_000, banMs: BAN_MS };

function limiterOn(now: () => number) {
  const engines = createMemoryEngines();
  const limiter = new Limiter(engines.limits, engines.pubsub, { scale: 1, ban: RULE }, now);
  return { engines, limiter };
}

/** What checkBan answers for `ip`: "ok", or the ban's retry_after in seconds. */
function banOf(limiter: Limiter, ip: string): "ok" | number {
  try {
    limiter.checkBan(ip);
    return "ok";
  } catch (err) {
    return (err as ApiError).extra["retry_after"] as number;
  }
}

/** Lets the in-process pub/sub deliver what was published. */
const settle = () => new Promise<void>((r) => setImmediate(r));

t.test("a ban event is JSON naming an address; anything else is ignored and a ban is capped", async (t) => {
  let now = 1_800_000_000_000;
  const { engines, limiter } = limiterOn(() => now);
  await limiter.start();
  // the old space-separated form that a spoofed header turned into a 3,000-year ban
  await engines.pubsub.publish("limits.ban", "192.0.2.55 99999999999999");
  await engines.pubsub.publish("limits.ban", JSON.stringify({ ip: "192.0.2.56 x", until: now + 1000 }));
  await engines.pubsub.publish("limits.ban", JSON.stringify({ ip: "192.0.2.57", until: "soon" }));
  await engines.pubsub.publish("limits.ban", "{not json");
  await engines.pubsub.publish("limits.ban", JSON.stringify({ ip: "192.0.2.58", until: 99_999_999_999_999 }));
  await settle();
  t.equal(banOf(limiter, "192.0.2.55"), "ok", "the old form bans nobody");
  t.equal(banOf(limiter, "192.0.2.56 x"), "ok", "nor does a text that is not an address");
  t.equal(banOf(limiter, "192.0.2.56"), "ok");
  t.equal(banOf(limiter, "192.0.2.57"), "ok", "nor an until that is not a time");
  t.equal(banOf(limiter, "192.0.2.58"), BAN_MS / 1000, "a far-off until is cut to FLOCK_BAN_SECONDS");
  now += BAN_MS;
  t.equal(banOf(limiter, "192.0.2.58"), "ok", "and ends then");
});

t.test("the limiter publishes JSON and strikes only addresses", async (t) => {
  const now = 1_800_000_000_000;
  const { engines, limiter } = limiterOn(() => now);
  await limiter.start();
  const seen: string[] = [];
  await engines.pubsub.subscribe("limits.ban", (b) => seen.push(b.toString()));
  const hammer = async (ip: string) => {
    const codes: string[] = [];
    for (let i = 0; i < 14; i++) {
      try {
        await limiter.enforce("register", ip, ip, {});
        codes.push("ok");
      } catch (err) {
        codes.push((err as ApiError).code);
      }
    }
    return codes;
  };
  const codes = await hammer("203.0.113.9");
  t.same(codes.slice(10), ["rate_limited", "rate_limited", "ip_banned", "ip_banned"]);
  await settle();
  t.same(
    seen.map((s) => JSON.parse(s)),
    [{ v: PROTOCOL, ip: "203.0.113.9", until: now + BAN_MS }],
    "with the protocol version",
  );
  const bad = await hammer("203.0.113.10 99999999999999");
  t.notOk(bad.includes("ip_banned"), "a text that is not an address is never banned");
  t.equal((engines.limits as MemoryLimits).size().strikes, 0, "nor struck");
});

t.test("strikes and bans of spoofed addresses cannot grow the maps without bound", async (t) => {
  let now = 1_800_000_000_000;
  const { engines, limiter } = limiterOn(() => now);
  await limiter.start();
  const limits = engines.limits as MemoryLimits;
  let maxStrikes = 0;
  let maxBans = 0;
  let maxKnown = 0;
  // 20,000 addresses each refused once or banned, a thousand a second: at any time only the live ones are kept
  for (let i = 0; i < 20_000; i++) {
    const ip = `2001:db8::${i.toString(16)}`;
    await limits.strike(ip, RULE, now);
    if (i % 10 === 0) {
      for (let k = 0; k < RULE.strikes; k++) await limits.strike(ip, RULE, now);
      await engines.pubsub.publish("limits.ban", JSON.stringify({ ip, until: now + BAN_MS }));
    }
    if (i % 500 === 0) await settle();
    now += 1;
    const s = limits.size();
    maxStrikes = Math.max(maxStrikes, s.strikes);
    maxBans = Math.max(maxBans, s.bans);
    maxKnown = Math.max(maxKnown, limiter.bansKnown());
  }
  // live at once: strikes of the last window (10 s = 10,000 addresses), bans of the last 120 s (all 2,000)
  t.ok(maxStrikes <= 2 * 10_000 + 1024, `strikes held at most ${maxStrikes}`);
  now += BAN_MS + RULE.windowMs;
  for (let i = 0; i < 5000; i++) {
    await limits.strike(`198.51.100.${i % 250}`, { ...RULE, strikes: 1_000_000 }, now + i);
  }
  t.ok(limits.size().strikes <= 2 * 250 + 1024, `old strikes swept (${limits.size().strikes} left)`);
  t.ok(limits.size().bans <= 1024, `ended bans swept (${limits.size().bans} left, at most ${maxBans})`);
  for (let i = 0; i < 2000; i++) {
    await engines.pubsub.publish("limits.ban", JSON.stringify({ ip: `192.0.2.${i % 250}`, until: now + BAN_MS }));
  }
  await settle();
  t.ok(
    limiter.bansKnown() <= 2 * 250 + 1024,
    `the limiter's ended bans swept (${limiter.bansKnown()} known, at most ${maxKnown})`,
  );
});
