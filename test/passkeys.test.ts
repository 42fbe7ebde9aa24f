// Passkeys (WebAuthn) end to end in Chromium with the DevTools protocol's virtual authenticator: sign-up and sign-in
// by passkey, a challenge answered once, a wallet user adding a passkey and signing in with it, a passkey removed
// (not the last way in), and the origins a ceremony may come from.
import type { CDPSession } from "playwright-core";
import t, { type Test } from "tap";
import { originAllowed } from "../runtime/signin/passkeys.ts";
import { call, randomIp, registerAgent } from "./helpers/http.ts";
import { signInWithWallet } from "./helpers/humans.ts";
import { startTestNode } from "./helpers/node.ts";
import { SoftAuthenticator } from "./helpers/soft-authenticator.ts";
import { launch, NO_BROWSER, type Page, shot, virtualAuthenticator, watchErrors } from "./helpers/web.ts";

const registerAgentToken = async (base: string) => (await registerAgent(base, "Bot")).token;

t.test("which origins a ceremony may come from", async (t) => {
  const local = { FLOCK_DOMAIN: "localhost", FLOCK_PUBLIC_URL: undefined };
  t.ok(originAllowed(local, "http://localhost:8080"));
  t.ok(originAllowed(local, "https://localhost"));
  t.notOk(originAllowed(local, "http://127.0.0.1:8080"), "an address is no relying party's");
  t.notOk(originAllowed(local, "http://localhost.evil.example"));
  t.notOk(originAllowed(local, "http://localhost:8080/path"), "an origin, not a URL");
  const prod = { FLOCK_DOMAIN: "flock.example", FLOCK_PUBLIC_URL: "https://chat.flock.example/app" };
  t.ok(originAllowed(prod, "https://flock.example"));
  t.ok(originAllowed(prod, "https://chat.flock.example"));
  t.notOk(originAllowed(prod, "http://flock.example"), "not over plain http");
  t.notOk(originAllowed(prod, "http://localhost:8080"), "localhost only where the domain is localhost");
  t.notOk(originAllowed(prod, "https://evil.example"));
});

t.test(
  "over HTTP with an authenticator in Node: sign-up, sign-in, a clone's counter refused, other origins refused",
  async (t) => {
    const node = await startTestNode(t, { engine: "memory" });
    const origin = node.url.replace("127.0.0.1", "localhost");
    const post = (path: string, json?: object, token?: string) =>
      call(node.url, "POST", path, { json: json ?? {}, token, headers: { "x-forwarded-for": randomIp() } });
    const key = new SoftAuthenticator(origin);

    const o1 = await post("/v1/auth/passkey/register-options", { display_name: "Sam" });
    t.equal(o1.status, 200);
    t.match(o1.body.options, {
      rp: { id: "localhost", name: "Flock" },
      user: { displayName: "Sam" },
      attestation: "none",
    });
    const up = await post("/v1/auth/passkey/register", {
      challenge_id: o1.body.challenge_id,
      response: key.register(o1.body.options),
    });
    t.equal(up.status, 200, JSON.stringify(up.body));
    t.equal(up.body.user.display_name, "Sam");

    const o2 = await post("/v1/auth/passkey/login-options");
    const signedIn = await post("/v1/auth/passkey/login", {
      challenge_id: o2.body.challenge_id,
      response: key.assert(o2.body.options),
    });
    t.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    t.equal(signedIn.body.user.id, up.body.user.id);

    // a copy of the authenticator, a step behind: its counter does not move forward
    key.credentials[0]!.counter -= 1;
    const o3 = await post("/v1/auth/passkey/login-options");
    const cloned = await post("/v1/auth/passkey/login", {
      challenge_id: o3.body.challenge_id,
      response: key.assert(o3.body.options),
    });
    t.equal(cloned.status, 401);
    t.match(cloned.body.message, /counter/);

    // another origin, and an answer to a challenge of the other kind
    const elsewhere = new SoftAuthenticator("https://evil.example");
    const o4 = await post("/v1/auth/passkey/register-options", {});
    const r4 = await post("/v1/auth/passkey/register", {
      challenge_id: o4.body.challenge_id,
      response: elsewhere.register(o4.body.options),
    });
    t.equal(r4.status, 401);
    t.match(r4.body.message, /origin/);
    const o5 = await post("/v1/auth/passkey/login-options");
    const r5 = await post("/v1/auth/passkey/register", {
      challenge_id: o5.body.challenge_id,
      response: key.register({ challenge: o5.body.options.challenge, rp: { id: "localhost" } }),
    });
    t.equal(r5.status, 401, "a sign-in challenge does not register");

    // the same credential registered twice
    const o6 = await post("/v1/users/me/passkeys/options", undefined, up.body.token);
    t.equal(o6.status, 200);
    t.equal(o6.body.options.excludeCredentials.length, 1, "the person's passkey is excluded");
    t.equal(
      (
        await call(node.url, "POST", "/v1/users/me/passkeys/options", {
          json: {},
          token: await registerAgentToken(node.url),
        })
      ).status,
      403,
      "agents have no passkeys",
    );
  },
);

t.test("a sign-up with a credential registered already answers 409 and makes no one", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const key = new SoftAuthenticator(node.url.replace("127.0.0.1", "localhost"));
  const post = (path: string, json?: object) =>
    call(node.url, "POST", path, { json: json ?? {}, headers: { "x-forwarded-for": randomIp() } });
  const o1 = await post("/v1/auth/passkey/register-options", { display_name: "First" });
  const up = await post("/v1/auth/passkey/register", {
    challenge_id: o1.body.challenge_id,
    response: key.register(o1.body.options),
  });
  t.equal(up.status, 200, JSON.stringify(up.body));

  const o2 = await post("/v1/auth/passkey/register-options", { display_name: "Second" });
  const again = await post("/v1/auth/passkey/register", {
    challenge_id: o2.body.challenge_id,
    response: key.register(o2.body.options, key.credentials[0]),
  });
  t.equal(again.status, 409, JSON.stringify(again.body));
  t.match(again.body.message, /registered already/);
  const [made] = await node.svc.sql<{ n: number }[]>`
    select count(*)::int as n from principals where kind = 'human' and display_name = 'Second'`;
  t.equal(made?.n, 0, "the sign-up's person is not created");

  const o3 = await post("/v1/auth/passkey/login-options");
  const signedIn = await post("/v1/auth/passkey/login", {
    challenge_id: o3.body.challenge_id,
    response: key.assert(o3.body.options),
  });
  t.equal(signedIn.body.user?.id, up.body.user.id, "the credential still signs in as the first person");
});

t.test("two devices removing a person's two passkeys at once leave one: the person keeps a way in", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const key = new SoftAuthenticator(node.url.replace("127.0.0.1", "localhost"));
  const post = (path: string, json?: object, token?: string) =>
    call(node.url, "POST", path, { json: json ?? {}, token, headers: { "x-forwarded-for": randomIp() } });
  const o1 = await post("/v1/auth/passkey/register-options", { display_name: "Two keys" });
  const up = await post("/v1/auth/passkey/register", {
    challenge_id: o1.body.challenge_id,
    response: key.register(o1.body.options),
  });
  const token = up.body.token as string;
  const o2 = await post("/v1/users/me/passkeys/options", undefined, token);
  t.equal(
    (
      await post(
        "/v1/auth/passkey/register",
        { challenge_id: o2.body.challenge_id, response: key.register(o2.body.options) },
        token,
      )
    ).status,
    200,
  );
  const ids = (await call(node.url, "GET", "/v1/users/me/passkeys", { token })).body.passkeys.map(
    (p: { id: string }) => p.id,
  ) as string[];
  t.equal(ids.length, 2);
  const answers = await Promise.all(
    ids.map((id) => call(node.url, "DELETE", `/v1/users/me/passkeys/${encodeURIComponent(id)}`, { token })),
  );
  t.same(answers.map((r) => r.status).sort(), [204, 409], "one removed, the other refused as the last way in");
  t.equal(
    (await call(node.url, "GET", "/v1/users/me/passkeys", { token })).body.passkeys.length,
    1,
    "one passkey left",
  );
});

t.test("options to add a passkey are rate limited, and a person holds one such challenge at a time", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const key = new SoftAuthenticator(node.url.replace("127.0.0.1", "localhost"));
  const post = (path: string, json?: object, token?: string) =>
    call(node.url, "POST", path, { json: json ?? {}, token, headers: { "x-forwarded-for": randomIp() } });
  const o1 = await post("/v1/auth/passkey/register-options", { display_name: "Many" });
  const up = await post("/v1/auth/passkey/register", {
    challenge_id: o1.body.challenge_id,
    response: key.register(o1.body.options),
  });
  const token = up.body.token as string;
  const asked = [];
  for (let i = 0; i < 12; i++) asked.push(await post("/v1/users/me/passkeys/options", undefined, token));
  const statuses = asked.map((r) => r.status);
  t.same(statuses.slice(0, 10), Array(10).fill(200), "ten a minute");
  t.same(statuses.slice(10), [429, 429], "then 429");
  t.equal(asked[10]!.body.error, "rate_limited");
  const held = await node.svc
    .sql`select count(*)::int as n from passkey_challenges where principal = ${up.body.user.id as string}`;
  t.equal(held[0]!["n"], 1, "each new options call replaced the older unused challenge");
  const older = await post(
    "/v1/auth/passkey/register",
    { challenge_id: asked[0]!.body.challenge_id, response: key.register(asked[0]!.body.options) },
    token,
  );
  t.equal(older.status, 401, "a replaced challenge is no longer answerable");
  const newest = await post(
    "/v1/auth/passkey/register",
    { challenge_id: asked[9]!.body.challenge_id, response: key.register(asked[9]!.body.options) },
    token,
  );
  t.equal(newest.status, 200, newest.text);
});

t.test("a malformed attestation or assertion is a 400 in our own words, never the library's", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const key = new SoftAuthenticator(node.url.replace("127.0.0.1", "localhost"));
  const post = (path: string, json?: object) =>
    call(node.url, "POST", path, { json: json ?? {}, headers: { "x-forwarded-for": randomIp() } });
  const ours = (t: Test, r: { status: number; body: { error: string; message: string } }, what: string) => {
    t.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
    t.equal(r.body.error, "invalid_request", what);
    t.notMatch(
      r.body.message,
      /is not a function|undefined|decoded|Unexpected|TypeError|Cannot read/i,
      `${what}: no library internals`,
    );
  };
  const regAnswers: [string, (a: ReturnType<SoftAuthenticator["register"]>) => unknown][] = [
    [
      "an attestation object that is a CBOR number",
      (a) => ({ ...a, response: { ...a.response, attestationObject: "AQ" } }),
    ],
    [
      "an attestation object that is not CBOR",
      (a) => ({ ...a, response: { ...a.response, attestationObject: "____" } }),
    ],
    [
      "an attestation object that is a number in JSON",
      (a) => ({ ...a, response: { ...a.response, attestationObject: 7 } }),
    ],
    ["no attestation object", (a) => ({ ...a, response: { clientDataJSON: a.response.clientDataJSON } })],
    ["client data that is not JSON", (a) => ({ ...a, response: { ...a.response, clientDataJSON: "bm90IGpzb24" } })],
  ];
  for (const [what, spoil] of regAnswers) {
    const o = await post("/v1/auth/passkey/register-options", { display_name: "Bad" });
    ours(
      t,
      await post("/v1/auth/passkey/register", {
        challenge_id: o.body.challenge_id,
        response: spoil(key.register(o.body.options)),
      }),
      what,
    );
  }
  const o1 = await post("/v1/auth/passkey/register-options", { display_name: "Good" });
  t.equal(
    (
      await post("/v1/auth/passkey/register", {
        challenge_id: o1.body.challenge_id,
        response: key.register(o1.body.options),
      })
    ).status,
    200,
  );
  const loginAnswers: [string, (a: ReturnType<SoftAuthenticator["assert"]>) => unknown][] = [
    ["authenticator data of one byte", (a) => ({ ...a, response: { ...a.response, authenticatorData: "AQ" } })],
    [
      "no signature",
      (a) => ({
        ...a,
        response: { clientDataJSON: a.response.clientDataJSON, authenticatorData: a.response.authenticatorData },
      }),
    ],
    ["a signature that is an object", (a) => ({ ...a, response: { ...a.response, signature: { x: 1 } } })],
  ];
  for (const [what, spoil] of loginAnswers) {
    const o = await post("/v1/auth/passkey/login-options");
    ours(
      t,
      await post("/v1/auth/passkey/login", {
        challenge_id: o.body.challenge_id,
        response: spoil(key.assert(o.body.options)),
      }),
      what,
    );
  }
  // well formed but signed by another key: not malformed, a failed sign-in, still in our own words
  const o2 = await post("/v1/auth/passkey/login-options");
  const good = key.assert(o2.body.options);
  const forged = await post("/v1/auth/passkey/login", {
    challenge_id: o2.body.challenge_id,
    response: { ...good, response: { ...good.response, signature: Buffer.alloc(70, 1).toString("base64url") } },
  });
  t.equal(forged.status, 401, forged.text);
  t.notMatch(forged.body.message, /is not a function|decoded|Unexpected|TypeError|ASN|DER/i);
});

t.test("in Chromium with a virtual authenticator", { skip: NO_BROWSER }, async (t) => {
  const node = await startTestNode(t);
  // the relying party is FLOCK_DOMAIN (localhost): the page must be on localhost, not 127.0.0.1
  const origin = node.url.replace("127.0.0.1", "localhost");
  const browser = await launch();
  t.teardown(() => browser.close());

  /** A fresh page on the server's origin with its own virtual authenticator (resident keys, user verification). */
  const pageWithAuthenticator = async (): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> => {
    const ctx = await browser.newContext();
    t.teardown(() => ctx.close());
    const page = await ctx.newPage();
    await page.goto(`${origin}/healthz`);
    return { page, ...(await virtualAuthenticator(ctx, page)) };
  };

  /** One ceremony in the page: options from `optionsPath`, the authenticator's answer to `answerPath`. */
  const ceremony = (
    page: Page,
    kind: "create" | "get",
    optionsPath: string,
    answerPath: string,
    optionsBody: object | null,
    token?: string,
  ) =>
    page.evaluate(
      async ({ kind, optionsPath, answerPath, optionsBody, token, ip }) => {
        // each ceremony from an address of its own (TRUST_PROXY is on in tests): the sign-in limit is per address
        const headers: Record<string, string> = {
          "content-type": "application/json",
          "x-forwarded-for": ip,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        };
        const o = await (
          await fetch(optionsPath, {
            method: "POST",
            headers,
            ...(optionsBody ? { body: JSON.stringify(optionsBody) } : {}),
          })
        ).json();
        const PKC = PublicKeyCredential as unknown as {
          parseCreationOptionsFromJSON(j: unknown): PublicKeyCredentialCreationOptions;
          parseRequestOptionsFromJSON(j: unknown): PublicKeyCredentialRequestOptions;
        };
        const cred =
          kind === "create"
            ? await navigator.credentials.create({ publicKey: PKC.parseCreationOptionsFromJSON(o.options) })
            : await navigator.credentials.get({ publicKey: PKC.parseRequestOptionsFromJSON(o.options) });
        const answer = { challenge_id: o.challenge_id, response: (cred as unknown as { toJSON(): unknown }).toJSON() };
        const r = await fetch(answerPath, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": ip },
          body: JSON.stringify(answer),
        });
        return { status: r.status, body: await r.json(), answer };
      },
      { kind, optionsPath, answerPath, optionsBody, token, ip: randomIp() },
    );

  await t.test("sign up with a passkey, then sign in with it; a challenge is answered once", async (t) => {
    const { page, cdp, authenticatorId } = await pageWithAuthenticator();
    const up = await ceremony(page, "create", "/v1/auth/passkey/register-options", "/v1/auth/passkey/register", {
      display_name: "Pat",
    });
    t.equal(up.status, 200, JSON.stringify(up.body));
    t.match(up.body, { user: { display_name: "Pat", wallets: [] }, token: /^pt_/ });
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    t.equal(credentials.length, 1, "the authenticator holds one passkey");
    t.equal(credentials[0]!.rpId, "localhost");

    const again = await call(node.url, "POST", "/v1/auth/passkey/register", {
      json: up.answer,
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(again.status, 401, "the same answer again: its challenge was used");

    const list = await call(node.url, "GET", "/v1/users/me/passkeys", { token: up.body.token });
    t.equal(list.status, 200);
    t.equal(list.body.passkeys.length, 1);

    const inAgain = await ceremony(page, "get", "/v1/auth/passkey/login-options", "/v1/auth/passkey/login", null);
    t.equal(inAgain.status, 200, JSON.stringify(inAgain.body));
    t.equal(inAgain.body.user.id, up.body.user.id, "the same person");
    t.not(inAgain.body.token, up.body.token, "with a new token");
    const me = await call(node.url, "GET", "/v1/users/me", { token: inAgain.body.token });
    t.equal(me.status, 200);
    const replay = await call(node.url, "POST", "/v1/auth/passkey/login", {
      json: inAgain.answer,
      headers: { "x-forwarded-for": randomIp() },
    });
    t.equal(replay.status, 401, "a sign-in answer replayed is refused");

    const last = await call(
      node.url,
      "DELETE",
      `/v1/users/me/passkeys/${encodeURIComponent(list.body.passkeys[0].id)}`,
      { token: up.body.token },
    );
    t.equal(last.status, 409, "the only way in cannot be removed");
  });

  await t.test("a wallet user adds a passkey and signs in with it as the same person; then removes it", async (t) => {
    const wallet = await signInWithWallet(node.url);
    const { page } = await pageWithAuthenticator();
    const added = await ceremony(
      page,
      "create",
      "/v1/users/me/passkeys/options",
      "/v1/auth/passkey/register",
      null,
      wallet.token,
    );
    t.equal(added.status, 200, JSON.stringify(added.body));
    t.equal(added.body.user.id, wallet.id, "added to the wallet's person");
    t.equal(added.body.user.wallets.length, 1, "who keeps the wallet");
    const viaPasskey = await ceremony(page, "get", "/v1/auth/passkey/login-options", "/v1/auth/passkey/login", null);
    t.equal(viaPasskey.status, 200);
    t.equal(viaPasskey.body.user.id, wallet.id, "signing in with the passkey is signing in as the wallet's person");
    const list = await call(node.url, "GET", "/v1/users/me/passkeys", { token: wallet.token });
    const id = list.body.passkeys[0].id as string;
    t.equal(
      (await call(node.url, "DELETE", `/v1/users/me/passkeys/${encodeURIComponent(id)}`, { token: wallet.token }))
        .status,
      204,
      "the wallet remains a way in",
    );
    const gone = await ceremony(page, "get", "/v1/auth/passkey/login-options", "/v1/auth/passkey/login", null);
    t.equal(gone.status, 401, "a removed passkey no longer signs in");
    t.equal((await call(node.url, "GET", "/v1/users/me/passkeys", { token: wallet.token })).body.passkeys.length, 0);
    const other = await signInWithWallet(node.url);
    t.equal(
      (await call(node.url, "DELETE", `/v1/users/me/passkeys/${encodeURIComponent(id)}`, { token: other.token }))
        .status,
      404,
      "nobody removes another's",
    );
  });

  await t.test("the web app: create an account with a passkey, sign out, sign in with it", async (t) => {
    const { page } = await pageWithAuthenticator();
    const watched = watchErrors(page, "passkey-app");
    const wait = { timeout: 15_000 };
    await page.goto(`${origin}/`);
    await page.getByLabel("New here? Your name").fill("Robin");
    await shot(page, "passkey-signin.png");
    await page.getByRole("button", { name: "Create an account with a passkey" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor(wait);
    await page.getByText("Robin").first().waitFor(wait);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor(wait);
    await page.getByText("Robin").first().waitFor(wait);
    await shot(page, "passkey-signed-in.png");
    // the profile page: a new name and read receipts off, kept by the server; the passkey listed
    await page.getByRole("link", { name: "Profile" }).click();
    await page.locator("[data-passkey]").first().waitFor(wait);
    await page.getByLabel("Display name").fill("Robin B");
    await page.getByLabel("Let others see when I have read their messages").uncheck();
    await page.getByRole("button", { name: "Save profile" }).click();
    await page.getByText("Saved.").waitFor(wait);
    await shot(page, "profile.png");
    const token = await page.evaluate(
      () => (JSON.parse(localStorage.getItem("flock.session") ?? "{}") as { token: string }).token,
    );
    const me = await call(node.url, "GET", "/v1/users/me", { token });
    t.equal(me.body.user.display_name, "Robin B");
    t.equal(me.body.user.read_receipts, false);
    t.same(watched.errors, [], "no console or page errors");
  });

  await t.test("bad answers are refused without a 500", async (t) => {
    const r1 = await call(node.url, "POST", "/v1/auth/passkey/login", {
      json: { challenge_id: "nope", response: { id: "x", rawId: "x", type: "public-key", response: {} } },
    });
    t.equal(r1.status, 400, "an assertion without its data is malformed");
    const r2 = await call(node.url, "POST", "/v1/auth/passkey/register", { json: { challenge_id: "nope" } });
    t.equal(r2.status, 400);
    const r3 = await call(node.url, "POST", "/v1/auth/passkey/register-options", {
      json: { display_name: "a\u202Eb" },
    });
    t.equal(r3.status, 400, "a display name with an override");
  });
});
