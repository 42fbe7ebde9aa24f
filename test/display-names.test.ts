// Names shown to others (agents' and persons' display names, group names) are bounded and hold no control
// characters or bidirectional overrides: an RTL override stored as sent would make a name read as another.
import t from "tap";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";

const node = await startTestNode(t, { engine: "memory" });

const BAD = {
  "a right-to-left override": "gpj\u202Eexe.doc",
  "a left-to-right embedding": "a\u202Ab",
  "a first-strong isolate": "x\u2068y",
  "a newline": "two\nlines",
  "a NUL": "nul\u0000",
  "a C1 control": "c1\u0085",
  DEL: "del\u007F",
};

/** Invisible characters that make a name look like another, or like none (issue 50, low 9). */
const INVISIBLE = {
  "a zero-width space alone": "\u200B",
  "a Hangul filler alone": "\u3164",
  "a halfwidth Hangul filler": "\uFFA0",
  "Hangul choseong and jungseong fillers": "\u115F\u1160",
  "a Braille blank alone": "\u2800",
  "a zero-width joiner after Latin letters": "Admin\u200D",
  "a zero-width space inside a word": "Ad\u200Bmin",
  "a zero-width non-joiner inside a Latin word": "Ad\u200Cmin",
  "a word joiner": "Ad\u2060min",
  "an invisible times": "a\u2062b",
  "a Mongolian vowel separator": "Ad\u180Emin",
  "a soft hyphen": "Ad\u00ADmin",
  "a left-to-right mark": "Admin\u200E",
  "a byte-order mark inside": "Ad\uFEFFmin",
  "a combining grapheme joiner": "Ad\u034Fmin",
  "a tag character": "Admin\u{E0041}",
  "a variation selector after a letter": "Admin\uFE0F",
  "a Hangul filler after a name": "Admin\u3164",
};

const FINE = {
  "a family emoji (zero-width joiners between pictographs)": "Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}",
  "a rainbow flag (variation selector, joiner)": "\u{1F3F3}\uFE0F\u200D\u{1F308} Pride",
  "a skin tone in a joined emoji": "\u{1F469}\u{1F3FD}\u200D\u{1F4BB} dev",
  "a heart with its emoji variation selector": "Love \u2764\uFE0F",
  "a keycap": "Agent 1\uFE0F\u20E3",
  "England's flag (tag characters)": "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F} fan",
  "Persian with a zero-width non-joiner": "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645",
  "Hindi with a zero-width joiner after a virama": "\u0915\u094D\u200D\u0937",
  "Hangul syllables": "\uD55C\uAE00",
};

t.test("invisible characters: a name of none but them is refused, and so are those that disguise a name", async (t) => {
  const a = await registerAgent(node.url, "Seen");
  for (const [what, name] of Object.entries(INVISIBLE)) {
    const r = await call(node.url, "POST", "/v1/agents/register", {
      json: { display_name: name },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(r.status, 400, `register: ${what}`);
    t.equal(r.body.field, "display_name", what);
    t.equal(
      (await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: name } })).status,
      400,
      `rename: ${what}`,
    );
  }
  for (const [what, name] of Object.entries(FINE)) {
    const r = await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: name } });
    t.equal(r.status, 200, `${what}: ${r.text}`);
    t.equal(r.body.agent?.display_name ?? r.body.display_name, name, `${what}: kept as sent`);
  }
  const long = await call(node.url, "PATCH", "/v1/agents/me", {
    token: a.token,
    json: { display_name: "\u200B".repeat(100_000) },
  });
  t.equal(long.status, 400, "too long is told before anything else");
  t.match(long.body.message, /64/);
});

t.test("registering and renaming an agent", async (t) => {
  for (const [what, name] of Object.entries(BAD)) {
    const r = await call(node.url, "POST", "/v1/agents/register", {
      json: { display_name: name },
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(r.status, 400, `register: ${what}`);
    t.equal(r.body.field, "display_name");
    t.match(r.body.message, /control characters or bidirectional overrides|NUL/);
  }
  const a = await registerAgent(node.url, "Plain");
  for (const [what, name] of Object.entries(BAD)) {
    t.equal(
      (await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: name } })).status,
      400,
      `rename: ${what}`,
    );
  }
  const ok = await call(node.url, "PATCH", "/v1/agents/me", {
    token: a.token,
    json: { display_name: "مرحبا Ünïcode 名前 👋" },
  });
  t.equal(ok.status, 200, "right-to-left letters, accents, other scripts and emoji are names like any");
  t.equal(
    (await call(node.url, "PATCH", "/v1/agents/me", { token: a.token, json: { display_name: "x".repeat(65) } })).status,
    400,
    "at most 64 characters",
  );
});

t.test("a person's display name and a group's name", async (t) => {
  const h = await signInWithWallet(node.url);
  for (const [what, name] of Object.entries(BAD)) {
    t.equal(
      (await call(node.url, "PATCH", "/v1/users/me", { token: h.token, json: { display_name: name } })).status,
      400,
      `person: ${what}`,
    );
  }
  const me = await call(node.url, "GET", "/v1/users/me", { token: h.token });
  t.notMatch(me.body.user.display_name, /[\u202A-\u202E]/, "nothing stored");
  const a = await registerAgent(node.url, "Owner");
  const b = await registerAgent(node.url, "Member");
  for (const [what, name] of Object.entries(BAD)) {
    const r = await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name, members: [b.id] } });
    t.equal(r.status, 400, `group: ${what}`);
    t.equal(r.body.field, "name");
  }
  t.equal(
    (await call(node.url, "POST", "/v1/groups", { token: a.token, json: { name: "Crew", members: [b.id] } })).status,
    201,
    "a plain name",
  );
});
