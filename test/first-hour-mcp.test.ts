// The MCP server's first hour, through the official MCP client over stdio against a live node: paying from a server
// installed without the payment packages says nothing was sent and what to install (not "call again"); a paid
// agent's 402 names the agent, says its price once and says how to go on (pay_and_send, or what the operator must
// configure); register hands out its token with the advice to keep it.
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import t, { type Test } from "tap";
import { callError, callJson, ensureClientBuilt, ROOT, sdkAt, stdioClient } from "./helpers/mcp.ts";
import { startTestNode } from "./helpers/node.ts";

await ensureClientBuilt();
const node = await startTestNode(t, { engine: "memory" });
const sdk = sdkAt(node.url);
const KEY = `0x${"42".repeat(32)}`;
const PAY_TO = "0x1111111111111111111111111111111111111111";

/** A paid agent on Base (a public network: its 402 needs no chain), and someone to write to it. */
async function paidAgentAndSender(name: string) {
  const agent = sdk();
  const reg = await agent.register({ display_name: name, description: "answers for a fee" });
  await agent.updateMe({ x402_enabled: true, price: 0.05, pay_to: PAY_TO, network: "eip155:8453" });
  const sender = await sdk().register({ display_name: `${name}'s customer` });
  return { id: reg.agent.id, agent, token: sender.token };
}

const count = (text: string, part: string) => text.split(part).length - 1;

/**
 * @flock/client installed as a project gets it without the payment packages: its built files and package.json in
 * node_modules/@flock/client, beside the MCP SDK, zod and ws only (links to this repository's copies, which resolve
 * their own dependencies where they are). Nothing on the path from there up has viem or the x402 packages.
 */
async function installWithoutPayments(t: Test): Promise<string> {
  const app = await mkdtemp(join(tmpdir(), "flock-nopay-"));
  t.teardown(() => rm(app, { recursive: true, force: true }));
  const pkg = join(app, "node_modules/@flock/client");
  await mkdir(join(app, "node_modules/@modelcontextprotocol"), { recursive: true });
  await cp(join(ROOT, "client/dist"), join(pkg, "dist"), { recursive: true });
  await cp(join(ROOT, "client/package.json"), join(pkg, "package.json"));
  // what npm installs with the package (its dependencies) and the MCP peers; not the payment peers
  const { dependencies } = JSON.parse(await readFile(join(ROOT, "client/package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dep of [...Object.keys(dependencies), "@modelcontextprotocol/sdk", "zod"])
    await symlink(join(ROOT, "node_modules", dep), join(app, "node_modules", dep), "dir");
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  return join(pkg, "dist/bin.js");
}

t.test("pay_and_send without the payment packages: nothing was sent, and which packages to install", async (t) => {
  const bin = await installWithoutPayments(t);
  const peers = (
    JSON.parse(await readFile(join(ROOT, "client/package.json"), "utf8")) as {
      peerDependencies: Record<string, string>;
    }
  ).peerDependencies;
  const paying = Object.entries(peers).filter(([name]) => name === "viem" || name.startsWith("@x402/"));
  t.ok(
    paying.some(([name]) => name === "viem"),
    "viem, which paying imports, is a peer of the package",
  );

  const oracle = await paidAgentAndSender("Oracle");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp"],
    env: {
      PATH: process.env["PATH"] ?? "",
      FLOCK_URL: node.url,
      FLOCK_TOKEN: oracle.token,
      FLOCK_MCP_PRIVATE_KEY: KEY,
      FLOCK_MCP_MAX_PER_MESSAGE: "1",
      FLOCK_MCP_MAX_TOTAL: "1",
    },
    stderr: "pipe",
  });
  const mcp = new Client({ name: "test", version: "1.0.0" });
  await mcp.connect(transport);
  t.teardown(() => mcp.close());
  t.ok(
    (await mcp.listTools()).tools.some((x) => x.name === "pay_and_send"),
    "the server runs from that install, paying configured",
  );

  const text = await callError(mcp, "pay_and_send", { to: oracle.id, body: "a paid question" });
  t.match(text, /nothing was sent/, "says nothing was sent");
  t.notMatch(text, /may or may not|call this tool again/i, "does not invite calling again");
  t.match(text, /viem is missing/, "names the package that is not there");
  for (const [name, range] of paying)
    t.ok(text.includes(`"${name}@${range}"`), `the install command names ${name}@${range}`);
  t.match(text, /npm install /);
  // a second call answers the same, and still nothing reached the agent
  t.match(await callError(mcp, "pay_and_send", { to: oracle.id, body: "again" }), /nothing was sent/);
  t.same(await oracle.agent.pending({ timeout: 0 }), [], "nothing was delivered");
});

t.test("a paid agent's 402 names the agent, gives its price once and says how to go on", async (t) => {
  const oracle = await paidAgentAndSender("Sibyl");
  const noWallet = await stdioClient({ FLOCK_URL: node.url, FLOCK_TOKEN: oracle.token });
  t.teardown(() => noWallet.close());
  const refused = await callError(noWallet, "send_message", { to: oracle.id, body: "free?" });
  t.match(refused, /^payment required: Sibyl \(agent \d+\) charges \$0\.05 per message \(US dollars: 50000 atomic/);
  t.equal(count(refused, "$0.05"), 1, "the price once");
  t.equal(count(refused, oracle.id), 1, "the agent's id once");
  t.equal(count(refused, "Sibyl"), 1, "the agent's name once");
  t.match(refused, /US dollars: 50000 atomic units of USD Coin/, "the currency");
  t.match(refused, new RegExp(`paid to ${PAY_TO}`, "i"));
  t.notMatch(refused, /PAYMENT-SIGNATURE|PAYMENT-REQUIRED|header/i, "no HTTP header a model cannot set");
  t.match(
    refused,
    /no paying wallet.*nothing was signed.*FLOCK_MCP_PRIVATE_KEY.*FLOCK_MCP_MAX_PER_MESSAGE.*pay_and_send/,
  );
  // pay_and_send without a wallet: the same, one paragraph
  const unpaid = await callError(noWallet, "pay_and_send", { to: oracle.id, body: "paid?" });
  t.equal(count(unpaid, "$0.05"), 1);
  t.match(unpaid, /Sibyl \(agent \d+\).*no paying wallet/);

  // a server that may pay: send_message's 402 points to pay_and_send within the caps
  const wallet = await stdioClient({
    FLOCK_URL: node.url,
    FLOCK_TOKEN: oracle.token,
    FLOCK_MCP_PRIVATE_KEY: KEY,
    FLOCK_MCP_MAX_PER_MESSAGE: "0.1",
    FLOCK_MCP_MAX_TOTAL: "1",
  });
  t.teardown(() => wallet.close());
  const pointed = await callError(wallet, "send_message", { to: oracle.id, body: "free?" });
  t.equal(count(pointed, "$0.05"), 1, "the price once");
  t.match(pointed, /call the tool pay_and_send with the same to and body.*\$0\.1 per message and \$1 in total/);
  t.notMatch(pointed, /PAYMENT-SIGNATURE|header/i);
});

t.test("register gives the token with the advice to keep it", async (t) => {
  const mcp = await stdioClient({ FLOCK_URL: node.url });
  t.teardown(() => mcp.close());
  const reg = await callJson<{ token: string; agent: { id: string }; token_advice: string }>(mcp, "register", {
    display_name: "Newcomer",
  });
  t.match(reg.token, /^am_/);
  t.match(reg.token_advice, /secret/);
  t.match(reg.token_advice, /shown once/);
  t.match(reg.token_advice, /FLOCK_TOKEN/);
});
