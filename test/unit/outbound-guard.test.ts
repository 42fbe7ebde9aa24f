// The outbound guard webhooks and Web Push share (runtime/net/outbound-guard.ts): every refused address kind, the URL
// rules, and a name resolving to a refused address (a resolver given by hand: no lookup leaves the machine, nothing
// connects but the one POST to a local server, to see that the connection goes to the address checked).
import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { checkOutboundUrl, isRefusedAddress, resolvePinned } from "../../runtime/net/outbound-guard.ts";
import { pinnedPost } from "../../runtime/net/pinned-post.ts";

t.test("each refused address kind", async (t) => {
  const refused: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback, anywhere in 127/8"],
    ["10.0.0.1", "private 10/8"],
    ["172.16.0.1", "private 172.16/12"],
    ["172.31.255.254", "private 172.16/12, its top"],
    ["192.168.1.1", "private 192.168/16"],
    ["169.254.169.254", "link-local (metadata services)"],
    ["100.64.0.1", "carrier NAT"],
    ["0.0.0.0", "unspecified"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique-local fc00::/7"],
    ["fd12:3456::1", "unique-local fd00::/8"],
    ["fe80::1", "IPv6 link-local"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, in hex"],
    ["::ffff:10.1.2.3", "IPv4-mapped private"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
  ];
  for (const [ip, what] of refused) t.ok(isRefusedAddress(ip), `${ip}: ${what}`);
  for (const ip of ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111", "::ffff:93.184.216.34"])
    t.notOk(isRefusedAddress(ip), `${ip} is public`);
});

t.test("the URL rules", async (t) => {
  const refused = (u: string, allow = false) => "refused" in checkOutboundUrl(u, allow);
  t.ok(refused("http://example.com/hook"), "http:// when private addresses are not allowed");
  t.notOk(refused("http://127.0.0.1:9/hook", true), "allowed with the operator setting");
  t.notOk(refused("https://example.com/hook"));
  for (const u of [
    "https://127.0.0.1/",
    "https://10.0.0.1/",
    "https://172.16.5.4/",
    "https://192.168.0.10/",
    "https://169.254.169.254/latest",
    "https://[::1]/",
    "https://[fc00::1]/",
    "https://[fd00::2]/",
    "https://0.0.0.0/",
    "https://localhost/",
    "https://api.localhost/",
    "https://printer.local/",
    "https://intranet/",
  ])
    t.ok(refused(u), `${u} refused`);
  t.ok(refused("ftp://example.com/"), "another scheme");
  t.ok(refused("https://user:pw@example.com/"), "credentials");
  t.ok(refused("https://example.com/hook#x"), "a fragment");
  t.ok(refused("not a url"));
  t.notOk(refused("https://intranet/", true), "a bare name, allowed with the operator setting");
});

t.test("a name is refused when any address it resolves to is", async (t) => {
  const to =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  await t.rejects(resolvePinned("evil.example", false, to("127.0.0.1")), /refused address/);
  await t.rejects(resolvePinned("mixed.example", false, to("93.184.216.34", "10.0.0.5")), /refused address/);
  await t.rejects(resolvePinned("v6.example", false, to("::1")), /refused address/);
  await t.rejects(resolvePinned("none.example", false, to()), /no address/);
  t.same(await resolvePinned("ok.example", false, to("93.184.216.34")), { address: "93.184.216.34", family: 4 });
  t.same(await resolvePinned("local.example", true, to("127.0.0.1")), { address: "127.0.0.1", family: 4 }, "allowed");
  t.same(await resolvePinned("[::1]", true), { address: "::1", family: 6 }, "a literal is not resolved");
});

t.test(
  "one pinned POST: refused before any connection, redirects not followed, a body past the cap dropped",
  async (t) => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers["x-probe"]}`);
      if (req.url === "/redirect") return res.writeHead(302, { location: "/elsewhere" }).end();
      if (req.url === "/big") return res.writeHead(200).end("x".repeat(64 * 1024));
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    t.teardown(() => server.close());
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (path: string, allowPrivate = true) =>
      pinnedPost(base + path, {
        headers: { "x-probe": "1" },
        body: "{}",
        allowPrivate,
        timeoutMs: 5000,
        bodyCap: 1024,
      });
    t.same(await post("/ok"), { status: 204, error: null });
    t.match(await post("/redirect"), { status: 302, error: /redirects are not followed/ });
    t.same(await post("/big"), { status: 200, error: null }, "a 2xx whose body passes the cap is still a 2xx");
    t.match(await post("/ok", false), { status: null, error: /https/ }, "http:// to loopback refused when not allowed");
    t.same(seen, ["POST /ok 1", "POST /redirect 1", "POST /big 1"], "the refused POST made no connection");
  },
);
