// The VAPID key pair from configuration (runtime/push/vapid.ts): used as given when both halves are set and are one
// pair; one half alone, or halves of two pairs, stop the start with a sentence. The pair shared through Postgres is
// test/web-push.test.ts's (two nodes on one schema sign with one key).
import { createECDH } from "node:crypto";
import t from "tap";
import { loadConfig } from "../../runtime/config.ts";
import type { Sql } from "../../runtime/db/client.ts";
import { loadVapid } from "../../runtime/push/vapid.ts";

function pair(): { pub: string; priv: string } {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return { pub: ecdh.getPublicKey().toString("base64url"), priv: ecdh.getPrivateKey().toString("base64url") };
}

/** A configured pair never reaches the database: any statement fails the test. */
const noSql = new Proxy(() => {}, {
  apply() {
    throw new Error("a configured pair read the database");
  },
}) as unknown as Sql;

t.test("a configured pair is used as given", async (t) => {
  const { pub, priv } = pair();
  const config = loadConfig({
    FLOCK_VAPID_PUBLIC_KEY: pub,
    FLOCK_VAPID_PRIVATE_KEY: priv,
    FLOCK_DOMAIN: "flock.example",
  });
  const v = await loadVapid(noSql, config);
  t.same(v, { publicKey: pub, privateKey: priv, subject: "mailto:push@flock.example", source: "configuration" });
  const subject = loadConfig({
    FLOCK_VAPID_PUBLIC_KEY: pub,
    FLOCK_VAPID_PRIVATE_KEY: priv,
    FLOCK_VAPID_SUBJECT: "https://flock.example/contact",
  });
  t.equal((await loadVapid(noSql, subject)).subject, "https://flock.example/contact");
});

t.test("half a pair, or two pairs' halves, stop the start", async (t) => {
  const a = pair();
  const b = pair();
  await t.rejects(loadVapid(noSql, loadConfig({ FLOCK_VAPID_PUBLIC_KEY: a.pub })), /must be set together/);
  await t.rejects(loadVapid(noSql, loadConfig({ FLOCK_VAPID_PRIVATE_KEY: a.priv })), /must be set together/);
  await t.rejects(
    loadVapid(noSql, loadConfig({ FLOCK_VAPID_PUBLIC_KEY: a.pub, FLOCK_VAPID_PRIVATE_KEY: b.priv })),
    /is not FLOCK_VAPID_PRIVATE_KEY's public key/,
  );
  t.throws(() => loadConfig({ FLOCK_VAPID_PUBLIC_KEY: "short" }), /FLOCK_VAPID_PUBLIC_KEY/);
  t.throws(() => loadConfig({ FLOCK_VAPID_SUBJECT: "http://flock.example" }), /mailto: or https:/);
});
