// Helpers for the web app tests: headless Debian chromium (playwright-core), a test wallet injected as
// window.ethereum (a viem local account answering eth_requestAccounts, eth_chainId, personal_sign and
// eth_signTypedData_v4 from Node), a recorder of every console error and page error, and tabs a test can hide and
// show, whose browser notifications it can see; which controls have no name; a small PNG to upload.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { deflateSync } from "node:zlib";
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from "playwright-core";
import type { Test } from "tap";
import type { Hex, LocalAccount } from "viem";
import { buildWeb } from "../../web/build.mjs";
import { startTestNode } from "./node.ts";

export const CHROMIUM = "/usr/bin/chromium";
/**
 * Why the browser tests cannot run on this machine (no chromium, outside CI), for tap's `skip`; false when they can.
 * In CI a missing browser is no reason: the tests run and fail.
 */
export const NO_BROWSER: string | false =
  !existsSync(CHROMIUM) && !process.env["CI"]
    ? `no ${CHROMIUM} on this machine, and not in CI (apt-get install chromium; .ci/run installs it)`
    : false;
export const SHOTS = resolve(import.meta.dirname, "../../test-output/web");

/** How every browser test starts Debian's chromium: headless, no sandbox, nothing reaching the network by itself. */
export const CHROMIUM_OPTIONS = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  timeout: 30_000,
};

export async function launch(): Promise<Browser> {
  return chromium.launch(CHROMIUM_OPTIONS);
}

interface TypedData {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** A browser context whose pages see `account` as their injected wallet; `calls` records each method asked. */
export async function walletContext(browser: Browser, account: LocalAccount, chainId = 31337) {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  const calls: string[] = [];
  await ctx.exposeFunction("__testWallet", async (method: string, params: unknown[]) => {
    calls.push(method);
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address];
      case "eth_chainId":
        return `0x${chainId.toString(16)}`;
      case "personal_sign": {
        const [data, address] = params as [Hex, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error("unknown account");
        return account.signMessage({ message: { raw: data } });
      }
      case "eth_signTypedData_v4": {
        const [address, json] = params as [string, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error("unknown account");
        const td = JSON.parse(json) as TypedData;
        const { EIP712Domain: _, ...types } = td.types;
        return account.signTypedData({
          domain: td.domain,
          types,
          primaryType: td.primaryType,
          message: td.message,
        } as never);
      }
      default:
        throw new Error(`unsupported method ${method}`);
    }
  });
  // a string, not a function: tsx's transform would leave helper names in a serialized function
  await ctx.addInitScript(`window.ethereum = {
    isTestWallet: true,
    request: ({ method, params }) => window.__testWallet(method, params ?? []),
  };`);
  return { ctx, calls };
}

/**
 * The app's one request expected to fail: asking for the report queue to learn whether the signed-in principal is a
 * moderator (404 for anyone else), which the browser logs as a failed resource.
 */
const MODERATOR_PROBE = /\/v1\/moderation\/reports\?limit=1$/;

/**
 * Records console errors and uncaught page errors (not the moderator probe's 404); `quiet` while the test breaks the
 * server on purpose.
 */
export function watchErrors(page: Page, name: string) {
  const errors: string[] = [];
  const state = { quiet: false };
  page.on("console", (m) => {
    if (m.type() !== "error" || state.quiet) return;
    if (/status of 404/.test(m.text()) && MODERATOR_PROBE.test(m.location().url)) return;
    // Chromium's own line when the notifications toggle subscribes to Web Push in a test's (incognito) context: the
    // browser refuses it, and the page says so (web/src/notify.tsx)
    if (/does not support the Push API in incognito mode/.test(m.text())) return;
    errors.push(`${name} console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`${name} pageerror: ${e.message}`));
  return { errors, state };
}

/**
 * Makes a context's pages hideable and their notifications visible to the test: grants the notifications
 * permission for `origin`; `setHidden` then switches a page's document.visibilityState (with the visibilitychange
 * event, as when the person switches tabs); and every `new Notification(title, {body, tag})` is recorded (the real one
 * is still made) for `notificationsOf`, as is every Notification.requestPermission() call.
 */
export async function hideableTabs(ctx: BrowserContext, origin: string): Promise<void> {
  await ctx.grantPermissions(["notifications"], { origin });
  // a string, not a function (see walletContext)
  await ctx.addInitScript(`(() => {
    let hidden = false;
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    window.__setHidden = (h) => {
      hidden = h;
      document.dispatchEvent(new Event("visibilitychange"));
    };
    window.__notifications = [];
    window.__permissionRequests = 0;
    const Real = window.Notification;
    if (!Real) return;
    class Recorded extends Real {
      constructor(title, options) {
        window.__notifications.push({ title, body: (options && options.body) || "", tag: (options && options.tag) || "" });
        super(title, options);
      }
    }
    Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
    Recorded.requestPermission = (...args) => {
      window.__permissionRequests++;
      return Real.requestPermission(...args);
    };
    window.Notification = Recorded;
  })();`);
}

interface TabWindow {
  __setHidden(hidden: boolean): void;
  __notifications: { title: string; body: string; tag: string }[];
  __permissionRequests: number;
}

/** Hides or shows a page of a context set up by hideableTabs. */
export async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate((h) => (window as unknown as TabWindow).__setHidden(h), hidden);
}

/** The notifications a page of a context set up by hideableTabs has shown, and how often it asked permission. */
export async function notificationsOf(page: Page): Promise<{ shown: TabWindow["__notifications"]; asked: number }> {
  return page.evaluate(() => ({
    shown: (window as unknown as TabWindow).__notifications,
    asked: (window as unknown as TabWindow).__permissionRequests,
  }));
}

export async function shot(page: Page, file: string): Promise<string> {
  await mkdir(SHOTS, { recursive: true });
  const path = join(SHOTS, file);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/**
 * Chromium's virtual authenticator on the page (CTAP2, internal, resident keys, the user verified, presence given
 * by itself), through the DevTools protocol: the page's passkey ceremonies are answered by it.
 */
export async function virtualAuthenticator(
  ctx: BrowserContext,
  page: Page,
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await ctx.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/** Signed in with a token, once the app's live connection is up. */
export async function signInLive(page: Page, url: string, token: string): Promise<void> {
  await signInWithToken(page, url, token);
  await page.locator('[data-live="online"]').waitFor({ timeout: 15_000 });
}

/** The page's scroll width and its window's width: nothing scrolls sideways while the first is at most the second. */
export const pageWidths = (page: Page) =>
  page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: innerWidth }));

/** Signs in on the page with a token (the sign-in page's token field), and waits for the app's navigation. */
export async function signInWithToken(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("textbox", { name: "Token" }).fill(token);
  await page.getByRole("button", { name: "Sign in with token" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor({ timeout: 15_000 });
}

export async function signInWithWallet(page: Page, url: string): Promise<{ id: string; token: string }> {
  await page.goto(url);
  await page.getByRole("button", { name: "Connect wallet and sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor({ timeout: 15_000 });
  return page.evaluate(() => {
    const s = JSON.parse(localStorage.getItem("flock.session") ?? "{}") as { me: { id: string }; token: string };
    return { id: s.me.id, token: s.token };
  });
}

/**
 * Controls with no accessible name, as Chromium computes them (its accessibility tree), plus unlabelled fields; fails
 * the test when the page has fewer than `least` controls (so an empty tree cannot pass).
 */
export async function unnamedControls(page: Page, least = 3): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as {
    nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[];
  };
  await cdp.detach();
  const controls = new Set([
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "checkbox",
    "radio",
    "listbox",
    "spinbutton",
    "slider",
    "switch",
  ]);
  const found = nodes.filter((n) => !n.ignored && controls.has(n.role?.value ?? ""));
  if (found.length < least) return [`only ${found.length} controls found`];
  const bad = found.filter((n) => !(n.name?.value ?? "").trim()).map((n) => `${n.role?.value} without a name`);
  const fields = await page.evaluate(() =>
    [...document.querySelectorAll("input, select, textarea")]
      .filter(
        (el) =>
          (el as HTMLInputElement).labels?.length === 0 &&
          !el.getAttribute("aria-label") &&
          !el.getAttribute("aria-labelledby"),
      )
      .map((el) => `${el.tagName.toLowerCase()}#${el.id} without a label`),
  );
  return [...bad, ...fields];
}

/** A 48x48 PNG in two colours (a picture to upload), built here: zlib for the pixels, a CRC-32 per chunk. */
export function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const size = 48;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const rows: number[] = [];
  for (let y = 0; y < size; y++) {
    rows.push(0); // no filter
    for (let x = 0; x < size; x++) rows.push(...(x + y < size ? [230, 120, 30] : [20, 90, 200]));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.from(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

export type { BrowserContext, Page };

/** The web app built from web/src, served by a node on the embedded engines: its URL. */
export async function webNode(t: Test): Promise<string> {
  await buildWeb();
  return (await startTestNode(t, { engine: "memory" })).url;
}
