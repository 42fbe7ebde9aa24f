// What a one-time ticket keeps (handlers/events.ts): the engine stores it under the SHA-256 of the ticket, and the
// token sealed (AES-256-GCM) with a key derived from the ticket. The ticket itself lives only in the client's URL, so
// a reader of Redis learns no token and cannot open a stream (the design card: only a token's SHA-256 is stored).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const digest = (label: string, ticket: string) => createHash("sha256").update(label).update(ticket).digest();

/** The name the engine keeps a ticket under. */
export const ticketKey = (ticket: string): string => digest("flock-ticket-key:", ticket).toString("base64url");

/** `token` sealed for `ticket`: iv, tag and ciphertext, base64url, dot-separated. */
export function sealTicket(ticket: string, token: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", digest("flock-ticket-seal:", ticket), iv);
  const body = Buffer.concat([c.update(token, "utf8"), c.final()]);
  return [iv, c.getAuthTag(), body].map((b) => b.toString("base64url")).join(".");
}

/** The token sealed for `ticket`, or null when `sealed` was not (a forged or damaged value). */
export function openTicket(ticket: string, sealed: string): string | null {
  const [iv, tag, body] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
  if (!iv || !tag || !body || iv.length !== 12 || tag.length !== 16) return null;
  try {
    const d = createDecipheriv("aes-256-gcm", digest("flock-ticket-seal:", ticket), iv);
    d.setAuthTag(tag);
    return Buffer.concat([d.update(body), d.final()]).toString("utf8");
  } catch {
    return null;
  }
}
