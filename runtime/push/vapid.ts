// The VAPID key pair (RFC 8292) this node signs pushes with, and the subject push services may write to. Configured
// (FLOCK_VAPID_PUBLIC_KEY and FLOCK_VAPID_PRIVATE_KEY, both or neither), or else shared through Postgres: the first node
// that starts without them makes a pair and keeps it (migration 0030, one row; a node starting at the same moment
// keeps nothing and reads the first's), and every node reads that one. Browsers subscribe with the public key, so
// every node must sign with the same pair, and it must outlive restarts (a new one would orphan every subscription).
import { createECDH } from "node:crypto";
import webpush from "web-push";
import type { Config } from "../config.ts";
import { ConfigError } from "../config.ts";
import type { Sql } from "../db/client.ts";
import { keepVapidKeys, readVapidKeys, type VapidKeys } from "./push-store.ts";

export interface Vapid extends VapidKeys {
  /** A mailto: or https: URL push services may contact about this server's pushes. */
  subject: string;
  /** Where the keys come from, for the start log. */
  source: "configuration" | "postgres";
}

type VapidConfig = Pick<
  Config,
  "FLOCK_VAPID_PUBLIC_KEY" | "FLOCK_VAPID_PRIVATE_KEY" | "FLOCK_VAPID_SUBJECT" | "FLOCK_DOMAIN"
>;

/** The node's key pair and subject: the configuration's, or the pair kept in Postgres (made now if there is none). */
export async function loadVapid(sql: Sql, config: VapidConfig): Promise<Vapid> {
  const subject = config.FLOCK_VAPID_SUBJECT ?? `mailto:push@${config.FLOCK_DOMAIN}`;
  const pub = config.FLOCK_VAPID_PUBLIC_KEY;
  const priv = config.FLOCK_VAPID_PRIVATE_KEY;
  if ((pub === undefined) !== (priv === undefined))
    throw new ConfigError(
      "invalid configuration:\n  FLOCK_VAPID_PUBLIC_KEY and FLOCK_VAPID_PRIVATE_KEY must be set together (or neither)",
    );
  if (pub !== undefined && priv !== undefined) {
    checkPair(pub, priv);
    return { publicKey: pub, privateKey: priv, subject, source: "configuration" };
  }
  const kept = (await readVapidKeys(sql)) ?? (await keepVapidKeys(sql, webpush.generateVAPIDKeys()));
  return { ...kept, subject, source: "postgres" };
}

/** Refuses a public key that is not the private key's (a pair pasted from two places signs what no browser accepts). */
function checkPair(pub: string, priv: string): void {
  let derived: string;
  try {
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(Buffer.from(priv, "base64url"));
    derived = ecdh.getPublicKey().toString("base64url");
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  FLOCK_VAPID_PRIVATE_KEY does not read: ${(err as Error).message}`);
  }
  if (derived !== pub)
    throw new ConfigError(
      "invalid configuration:\n  FLOCK_VAPID_PUBLIC_KEY is not FLOCK_VAPID_PRIVATE_KEY's public key",
    );
}
