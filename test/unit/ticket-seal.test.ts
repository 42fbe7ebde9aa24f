// A one-time ticket's stored form (runtime/ws/ticket-seal.ts): the engine's key and value reveal neither the ticket
// nor the token, and only the ticket opens its value.
import t from "tap";
import { openTicket, sealTicket, ticketKey } from "../../runtime/ws/ticket-seal.ts";

const ticket = "b2Jq3xX0dEqvQmYkZ9mU2c6rT1wLhN8p";
const token = "am_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

t.test("the ticket opens what was sealed for it, and nothing else does", async (t) => {
  const sealed = sealTicket(ticket, token);
  t.equal(openTicket(ticket, sealed), token, "the ticket opens it");
  t.equal(openTicket(`${ticket}x`, sealed), null, "another ticket does not");
  const [iv, tag, body] = sealed.split(".");
  const flipped = Buffer.from(body!, "base64url");
  flipped[0] = flipped[0]! ^ 1;
  t.equal(
    openTicket(ticket, [iv, tag, flipped.toString("base64url")].join(".")),
    null,
    "a changed value does not open",
  );
  t.equal(openTicket(ticket, "garbage"), null, "nor a value that was never sealed");
  t.not(sealTicket(ticket, token), sealed, "each seal has its own iv");
});

t.test("what the engine stores names neither the ticket nor the token", async (t) => {
  const key = ticketKey(ticket);
  const sealed = sealTicket(ticket, token);
  t.notOk(key.includes(ticket), "the key is not the ticket");
  t.equal(key, ticketKey(ticket), "the same ticket, the same key");
  t.notOk(sealed.includes(token) || Buffer.from(sealed).includes(Buffer.from(token)), "the value holds no token");
  t.notOk(sealed.includes(ticket), "nor the ticket");
});
