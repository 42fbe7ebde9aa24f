// Errors that say what to do (issue 39): a request that gets no answer is a FlockNetworkError naming the URL, the
// cause and whether to retry; a validation failure is a sentence naming the field and the rule; leaving a
// `for await` loop with `break` acknowledges the message the body had.
import { createServer, type Server } from "node:net";
import t from "tap";
import { Flock, FlockError, FlockNetworkError } from "../client/index.ts";
import { startTestNode } from "./helpers/node.ts";

const once = { retry: { maxAttempts: 1 } };

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A TCP server that does `onSocket` with every connection; closed when the test ends. */
async function tcp(
  t: { teardown(fn: () => unknown): void },
  onSocket: (s: import("node:net").Socket) => void,
): Promise<string> {
  const server: Server = createServer(onSocket);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

t.test("no answer: a FlockNetworkError with the URL, the cause and retryable", async (t) => {
  const port = await closedPort();
  const down = await failure(new Flock({ baseUrl: `http://127.0.0.1:${port}`, ...once }).me());
  t.ok(down instanceof FlockNetworkError, "server down: FlockNetworkError");
  t.ok(down instanceof FlockError, "... which is a FlockError");
  const e = down as FlockNetworkError;
  t.equal(e.name, "FlockNetworkError");
  t.equal(e.status, 0);
  t.equal(e.url, `http://127.0.0.1:${port}/v1/agents/me`);
  t.same(e.cause, { message: `connect ECONNREFUSED 127.0.0.1:${port}`, code: "ECONNREFUSED" });
  t.equal(e.retryable, true);
  t.match(
    e.message,
    new RegExp(
      `^could not reach http://127\\.0\\.0\\.1:${port}/v1/agents/me: connect ECONNREFUSED .*is the server running`,
    ),
  );
  t.notMatch(e.message, /undefined|TypeError/);

  // a base URL without a scheme: said before anything is sent, with the fix
  const noScheme = (await failure(new Flock({ baseUrl: "localhost:8080", ...once }).me())) as FlockNetworkError;
  t.ok(noScheme instanceof FlockNetworkError);
  t.equal(noScheme.code, "invalid_url");
  t.equal(noScheme.retryable, false);
  t.match(
    noScheme.message,
    /the base URL "localhost:8080" is not an http\(s\) URL: add the scheme: "http:\/\/localhost:8080"/,
  );

  // DNS: what undici throws for a name that does not resolve (simulated: no resolver is needed)
  const dnsFetch: typeof fetch = () => {
    throw new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND flock.invalid"), { code: "ENOTFOUND" }),
    });
  };
  const dns = (await failure(
    new Flock({ baseUrl: "http://flock.invalid", fetch: dnsFetch, ...once }).me(),
  )) as FlockNetworkError;
  t.ok(dns instanceof FlockNetworkError);
  t.same(dns.cause, { message: "getaddrinfo ENOTFOUND flock.invalid", code: "ENOTFOUND" });
  t.equal(dns.retryable, false, "a name that does not resolve will not resolve on a retry");
  t.match(dns.message, /does not resolve/);
});

t.test("a connection reset and a timeout are FlockNetworkErrors too, retryable", async (t) => {
  const resetUrl = await tcp(t, (s) => s.once("data", () => s.resetAndDestroy()));
  const reset = (await failure(new Flock({ baseUrl: resetUrl, ...once }).me())) as FlockNetworkError;
  t.ok(reset instanceof FlockNetworkError, "reset");
  t.equal(reset.cause.code, "ECONNRESET");
  t.equal(reset.retryable, true);

  const silentUrl = await tcp(t, (s) => s.on("data", () => {}));
  const timed = new Flock({
    baseUrl: silentUrl,
    ...once,
    fetch: (u, i) => fetch(u, { ...i, signal: AbortSignal.timeout(200) }),
  });
  const timeout = (await failure(timed.me())) as FlockNetworkError;
  t.ok(timeout instanceof FlockNetworkError, "timeout");
  t.equal(timeout.cause.code, "timeout");
  t.equal(timeout.retryable, true);

  // the caller's own abort stays an AbortError (it is not a failure of the network)
  const ac = new AbortController();
  const pending = failure(new Flock({ baseUrl: silentUrl, ...once }).me({ signal: ac.signal }));
  ac.abort();
  t.equal(((await pending) as Error).name, "AbortError");
});

t.test("validation failures are sentences that name the field and the rule", async (t) => {
  const node = await startTestNode(t, { engine: "memory" });
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  await a.register({ display_name: "Checker" });
  const body = async (p: Promise<unknown>) => {
    const e = (await failure(p)) as FlockError;
    t.ok(e instanceof FlockError);
    t.equal(e.status, 400);
    t.equal(e.code, "invalid_request");
    return { message: e.message, ...(e.body as { field: string; issues: { field: string; message: string }[] }) };
  };

  const empty = await body(a.post({ content: "  ", visibility: "public" }));
  t.equal(empty.message, "content: must be 1 to 2000 characters (after trimming spaces)");
  t.equal(empty.field, "content");

  const missing = await body(a.http.request("POST", "/v1/moments", { json: { content: "hi" } }));
  t.equal(missing.message, "visibility: required; one of public, friends, private");
  t.same(missing.issues, [{ field: "visibility", message: "required; one of public, friends, private" }]);

  const wrong = await body(a.post({ content: "hi", visibility: "everyone" as "public" }));
  t.equal(wrong.message, "visibility: must be one of public, friends, private");

  const long = await body(a.send((await a.me()).id, "x".repeat(8001)));
  t.match(long.message, /^(body: must be 1 to 8000 characters|to: .+)$/);

  const notString = await body(a.http.request("POST", "/v1/moments", { json: { content: 5, visibility: "public" } }));
  t.equal(notString.message, "content: must be a string");

  const badLimit = await body(a.feed({ limit: 500 }));
  t.equal(badLimit.field, "limit");
  t.notMatch(badLimit.message, /Too (small|big)|Invalid|expected/);
  for (const m of [empty, missing, wrong, long, notString, badLimit])
    t.notMatch(m.message, /Too (small|big)|Invalid (input|option)|expected \w+, received/);
});

t.test("break after handling a message acknowledges it: it does not come back", async (t) => {
  const node = await startTestNode(t);
  const a = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  const b = new Flock({ baseUrl: node.url, sendsPerSecond: 1000 });
  await a.register({ display_name: "sender" });
  const bob = (await b.register({ display_name: "receiver" })).agent.id;

  for (const transport of ["poll", "ws"] as const) {
    await a.send(bob, `first by ${transport}`);
    await a.send(bob, `second by ${transport}`);
    const handled: string[] = [];
    for await (const msg of b.messages({ transport, timeout: 2 })) {
      handled.push(`${msg.body} (${msg.delivery_count})`);
      break;
    }
    t.same(handled, [`first by ${transport} (1)`], `${transport}: handled one, then left the loop`);
    const left = await b.pending({ timeout: 0 });
    t.same(
      left.map((m) => m.body),
      [`second by ${transport}`],
      `${transport}: the handled one was acknowledged by the break`,
    );
    t.ok(left.every((m) => m.body !== `first by ${transport}`));
    // `return` from a function inside the loop: the same
    const got = await (async () => {
      for await (const msg of b.messages({ transport, timeout: 2 })) return msg;
      return undefined;
    })();
    t.equal(got?.body, `second by ${transport}`);
    t.same(await b.pending({ timeout: 0 }), [], `${transport}: return acknowledged it too`);
  }

  // ackOnExit: false keeps the old behaviour: the message the loop was left with comes again
  await a.send(bob, "kept");
  for await (const msg of b.messages({ timeout: 2, ackOnExit: false })) if (msg.body === "kept") break;
  const again = await b.pending({ timeout: 0 });
  t.same(
    again.map((m) => [m.body, m.delivery_count]),
    [["kept", 2]],
  );
});
