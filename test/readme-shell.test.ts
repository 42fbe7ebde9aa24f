// Every fenced shell block of README.md and client/README.md runs in CI: the API tour's in test/readme.test.ts, the
// JS and TS blocks in test/readme-js.test.ts, the install commands in test/readme-install.test.ts (the packed SDK,
// the MCP server's global install) and every other shell block here, as it is, against a live node, with
// only what cannot be the reader's replaced (and said so below): /tmp becomes a fresh temporary folder, `-g` a private
// npm prefix, the example servers' URLs the test servers (each test with its own Postgres schema and Redis prefix),
// http://localhost:8080 the node's address, and the reader's Ctrl-C a SIGINT from the test. A block that cannot run
// at all stands in PLANS with the reason and what runs in its place. The first test fails on a block of a runnable
// language (sh, bash, shell, console, js, ts...) or an untagged one that no README test runs or lists.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import t from "tap";
import { TEST_DATABASE_URL, TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix, dropSchema, startTestNode } from "./helpers/node.ts";
import { freePort } from "./helpers/private-servers.ts";
import { keyOf, READMES, readmeBlocks, ROOT, shellBlock as block, TOUR } from "./helpers/readme-blocks.ts";
import { bash, type Run, signalGroup } from "./helpers/shell.ts";
import { until } from "./helpers/wait.ts";

type Plan =
  | { /** The test file that runs it (it names the block by its first command). */ run: string }
  | { instead: string; /** The test that runs the substitute, and a line it must hold. */ by?: [string, string] };

/** Every shell block outside the API tour, by its file and first command: the test that runs it, or why none does. */
const PLANS: Record<string, Plan> = {
  "README.md: npm ci && npm start": {
    instead:
      "`npm ci` would reinstall the node_modules this suite runs from, and `npm test` is this suite; .ci/run runs both from a " +
      "clean clone. `npm start` on a fresh DATA_DIR is test/npm-start.test.ts",
    by: ["test/npm-start.test.ts", 'spawn("npm", ["start"]'],
  },
  "README.md: DATABASE_URL=postgres://127.0.0.1:5432/flock REDIS_URL=redis://127.0.0.1:6379 npm start": {
    run: "test/readme-shell.test.ts",
  },
  "README.md: npm pack ./client --pack-destination /tmp": { run: "test/readme-install.test.ts" },
  "client/README.md: npm pack ./client --pack-destination /tmp": { run: "test/readme-install.test.ts" },
  'README.md: npx flockctl register "Scout" --save': { run: "test/readme-shell.test.ts" },
  "README.md: npm pack ./client --pack-destination /tmp && npm install -g /tmp/flock-client-0.1.0.tgz @modelcontextprotocol/sdk@^1.32.2 zod@^4.6.7":
    {
      run: "test/readme-install.test.ts",
    },
  "README.md: npm run moderator -- grant 117873677508280320": {
    instead:
      "names an agent of the reader's and the server's database; the admin command (grant, list, revoke, a bad id) " +
      "runs against a test node's schema in test/moderation.test.ts",
    by: ["test/moderation.test.ts", 'run("grant", mod.id)'],
  },
  'README.md: curl -s "$FLOCK/v1/moderation/reports?limit=20" -H "Authorization: Bearer $MOD"': {
    instead:
      "needs a moderator's token (MOD) and names a principal and a moment of the reader's; every moderation call is " +
      "made for real in test/moderation.test.ts and test/spammer.test.ts",
    by: ["test/spammer.test.ts", '"/v1/moderation/suspensions"'],
  },
  "README.md: npm run bench -- --scenario all --duration 10 --agents 100 --connections 50": {
    instead:
      "a full bench run takes about four minutes of both cores, which would skew every test beside it; its third line " +
      "names a deployment of the reader's (--url http://my-deployment:8080). The bench is run by hand (bench/RESULTS.md)",
  },
  "README.md: DATABASE_URL=postgres://127.0.0.1:5432/flock_bench REDIS_URL=redis://127.0.0.1:6379 npm run bench:peers":
    {
      instead:
        "installs Socket.IO and Soketi from the registry into bench/.peers on its first run and takes about five minutes; " +
        "its second line needs another commit's work tree (../flock-before). Run by hand (bench/RESULTS.md)",
    },
};

const all = READMES.flatMap((f) => readmeBlocks(f));

t.test("every shell, JS and TS block of both READMEs is run, or listed with what runs instead", async (t) => {
  const seen = new Set<string>();
  for (const b of all) {
    const at = `${b.file}:${b.line}`;
    if (b.kind === "untagged")
      t.fail(`${at}: a fenced block without a language: tag it (sh, ts, json...) so that it is run or plainly data`);
    else if (b.kind === "js" || b.kind === "ts")
      t.pass(
        `${at} (${b.tag}): run by test/readme-js.test.ts${/\bskip-run\b/.test(b.info) ? " (skip-run: counted there)" : ""}`,
      );
    else if (b.kind === "shell" && b.file === "README.md" && b.section === TOUR)
      t.pass(`${at}: the API tour, run by test/readme.test.ts`);
    else if (b.kind === "shell") {
      const plan = PLANS[keyOf(b)];
      t.ok(plan, `${at}: run here, or listed in PLANS with the reason (${keyOf(b)})`);
      seen.add(keyOf(b));
    }
  }
  t.same(
    Object.keys(PLANS).filter((k) => !seen.has(k)),
    [],
    "every entry of PLANS names a block that is there",
  );
  for (const [key, plan] of Object.entries(PLANS)) {
    if ("run" in plan) {
      const command = key.slice(key.indexOf(": ") + 2);
      t.ok(readFileSync(join(ROOT, plan.run), "utf8").includes(command), `${key}: ${plan.run} runs it`);
    } else if (plan.by) {
      const [file, line] = plan.by;
      t.ok(readFileSync(join(ROOT, file), "utf8").includes(line), `${key}: ${file} runs the substitute (${line})`);
    }
  }
  // the tour's blocks are the ones readme.test.ts runs: sh or bash in README.md's API tour
  t.ok(
    all.some((b) => b.section === TOUR && b.kind === "shell"),
    "the API tour has shell blocks",
  );
});

const temp = (t: { teardown(fn: () => void): void }, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), `flock-readme-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test("the command line examples run in order, logged in by register --save", async (t) => {
  const node = await startTestNode(t, { engine: "memory", env: { FLOCK_LIMITS_SCALE: "20" } });
  const b = block('README.md: npx flockctl register "Scout" --save');
  const config = temp(t, "xdg");
  // `listen` runs until the reader's Ctrl-C: here someone writes to the listening agent, and once the message is
  // printed the test sends the SIGINT that Ctrl-C sends, to the command's process group (npx then exits 130, as any
  // command Ctrl-C stops does; listen itself exits 0)
  const prelude = `
set -eo pipefail
npx() {
  if [ "$1" = flockctl ] && [ "$2" = listen ]; then
    local me out pid code=0
    me=$(command npx flockctl whoami --json | jq -r .agent.id)
    out=$(mktemp)
    set -m; command npx "$@" >"$out" & pid=$!; set +m
    FLOCK_TOKEN=$(command npx flockctl register Pinger --json | jq -r .token) command npx flockctl send "$me" "ping from the test" >/dev/null
    for _ in $(seq 600); do grep -q "ping from the test" "$out" && break; sleep 0.05; done
    kill -INT -- "-$pid"
    wait "$pid" || code=$?
    cat "$out"; rm -f "$out"
    echo "@@listen exited $code" >&2
    [ "$code" = 0 ] || [ "$code" = 130 ]
    return
  fi
  command npx "$@"
}
`;
  const r = await bash(`${prelude}\n${b.code}`, ROOT, { FLOCK_URL: node.url, XDG_CONFIG_HOME: config });
  t.equal(r.code, 0, `${b.file}:${b.line} runs${r.code === 0 ? "" : `:\n${r.stdout}\n${r.stderr}`}`);
  t.match(r.stdout, /^agent \d+ \(Scout\)\ntoken am_\w+\nlogged in: saved to /m, "register --save logs in");
  t.match(r.stdout, /^posted moment_\d+ \(public\)$/m, "post");
  t.match(r.stdout, /^moment_\d+ {2}Scout: hello {2}\[0 likes, 0 comments\]$/m, "feed");
  t.match(r.stdout, /^sent msg_\d+ in thread_\d+$/m, "send to Echo");
  t.match(r.stdout, /Pinger \(\d+\) in thread_\d+: ping from the test$/m, "listen prints what arrives");
  t.match(r.stderr, /@@listen exited (0|130)/);
  t.match(r.stdout, /"content": "hello",\n\s+"visibility": "public"/, "feed --json | jq");
});

t.test("npm start on real servers, as the README writes it", async (t) => {
  const b = block("README.md: DATABASE_URL=postgres://127.0.0.1:5432/flock REDIS_URL=redis://127.0.0.1:6379 npm start");
  const schema = uniqueName("readme");
  const prefix = `flocktest:${uniqueName("readme")}:`;
  t.teardown(async () => {
    await dropSchema(schema);
    await deletePrefix(prefix);
  });
  const port = await freePort();
  // the example's servers are the test servers, in a schema and key prefix of this test's own
  const script = b.code
    .replaceAll("postgres://127.0.0.1:5432/flock", TEST_DATABASE_URL)
    .replaceAll("redis://127.0.0.1:6379", TEST_REDIS_URL);
  const started = bash(
    script,
    ROOT,
    { PG_SCHEMA: schema, REDIS_PREFIX: prefix, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    60_000,
  );
  let exited: Run | undefined;
  void started.then((r) => (exited = r));
  t.teardown(() => signalGroup(started.child, "SIGKILL"));
  const ready = async () => {
    if (exited) throw new Error(`npm start exited ${exited.code}:\n${exited.stdout}${exited.stderr}`);
    return fetch(`http://127.0.0.1:${port}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
  };
  await until(ready, { ms: 45_000, every: 100, what: "/readyz to answer 200" });
  t.pass("the node answers /readyz: Postgres and Redis reached");
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from information_schema.tables where table_schema = ${schema}`;
  t.ok(row!.n > 0, `the migrations ran into its schema (${row!.n} tables)`);
  started.child.kill("SIGTERM"); // to npm (bash runs the one command in its place), which passes it to the node
  const r = await started;
  t.equal(r.code, 0, `SIGTERM stops it cleanly${r.code === 0 ? "" : `:\n${r.stdout}${r.stderr}`}`);
});
