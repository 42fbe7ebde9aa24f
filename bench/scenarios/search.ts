// `npm run bench -- --scenario search [--messages N] [--rounds N]` on DATABASE_URL (Postgres): what a search costs
// over a long history (issue 50). One node (what `npm start` runs) in a schema of its own; agents A and B share a
// group holding N messages (100,000 by default), and C and D another with as many, of the same words, so a word
// common everywhere is common outside A's threads too. Then, for A: each query alone, `rounds` times (p50, p99, max);
// 8 searches at once for a few seconds while a bystander reads GET /v1/agents/me one after another (its latency
// against the same bystander alone); and people searches among 10,000 agents. The schema is dropped afterwards.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { pool } from "../lib/fleet.ts";
import { keyHeader } from "../lib/idempotency.ts";
import { quantile } from "../lib/load.ts";
import { startScript } from "../lib/procs.ts";

/** The words bodies are made of: word i is used about 1/(i+1) as often as word 0 (Zipf). */
const VOCABULARY = 5000;
const word = (i: number) => `w${i.toString(36)}`;
const PARALLEL = 8;
const PARALLEL_SECONDS = 5;
const AGENTS = 10_000;

function zipf(): (r: number) => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < VOCABULARY; i++) cumulative.push((sum += 1 / (i + 1)));
  return (r) => {
    const x = r * sum;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const body = (pick: (r: number) => number) =>
  Array.from({ length: 8 + Math.floor(Math.random() * 16) }, () => word(pick(Math.random()))).join(" ");

interface Stats {
  p50: number;
  p99: number;
  max: number;
}

const stats = (ms: number[]): Stats => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1] ?? 0 };
};
const fmt = (s: Stats) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms`;

export async function searchMain(argv: string[]): Promise<number> {
  const { values: a } = parseArgs({
    args: argv,
    options: {
      scenario: { type: "string" },
      messages: { type: "string", default: "100000" },
      rounds: { type: "string", default: "200" },
    },
  });
  const n = Number(a.messages);
  const rounds = Number(a.rounds);
  const dbUrl = process.env["DATABASE_URL"];
  if (!dbUrl) {
    process.stderr.write("[search] needs DATABASE_URL (a real Postgres): the figures are Postgres's\n");
    return 2;
  }
  const schema = `bench_search_${randomBytes(4).toString("hex")}`;
  const sql = postgres(dbUrl, { max: 2, onnotice: () => {} });
  const env = {
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    PG_SCHEMA: schema,
    FLOCK_LIMITS_SCALE: "100000",
    DATA_DIR: mkdtempSync(join(tmpdir(), "flock-search-")),
  };
  const flock = await startScript("dist/runtime/main.js", env, /"port":(\d+)[^\n]*"msg":"flock listening"/).catch(
    async () =>
      startScript("dist/runtime/main.js", { ...env, LOG_LEVEL: "info" }, /"port":(\d+)[^\n]*"msg":"flock listening"/),
  );
  const url = `http://127.0.0.1:${flock.port}`;
  const call = async (
    method: string,
    path: string,
    token?: string,
    json?: unknown,
    headers?: Record<string, string>,
  ) => {
    const r = await fetch(url + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(json !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const register = async (name: string) => {
    const r = await call("POST", "/v1/agents/register", undefined, { display_name: name });
    return { id: (r["agent"] as { id: string }).id, token: r["token"] as string };
  };
  try {
    const A = await register("search-a");
    const B = await register("search-b");
    const C = await register("search-c");
    const D = await register("search-d");
    const pick = zipf();
    // each filled message's id is a millisecond of its own before the group's first, with low bits (node and sequence)
    // no node makes, different for each group
    const fill = async (owner: { token: string }, other: { id: string }, lowBits: bigint) => {
      const g = await call("POST", "/v1/groups", owner.token, { name: "history", members: [other.id] }, keyHeader());
      const gid = (g["group"] as { id: string }).id;
      const first = await call(
        "POST",
        `/v1/groups/${gid}/messages`,
        owner.token,
        { body: "the newest message" },
        keyHeader(),
      );
      const head = (
        await sql.unsafe(`select id, thread_id, sender, created_at from "${schema}".messages where id = $1`, [
          String(first["id"]).slice(4),
        ])
      )[0]!;
      const ms = BigInt(head["id"] as string) >> 22n;
      for (let done = 0; done < n; done += 5000) {
        const rows = Array.from({ length: Math.min(5000, n - done) }, (_, k) => ({
          id: String(((ms - BigInt(done + k + 1)) << 22n) | lowBits),
          thread_id: String(head["thread_id"]),
          sender: head["sender"] as string,
          body: body(pick),
          created_at: head["created_at"] as Date,
          seq: 0,
        }));
        await sql`insert into ${sql(schema)}.messages ${sql(rows, "id", "thread_id", "sender", "body", "created_at", "seq")}`;
      }
    };
    process.stderr.write(`[search] filling two groups with ${n} messages each\n`);
    await fill(A, B, 0x3ffff0n);
    await fill(C, D, 0x3ffff1n);
    process.stderr.write(`[search] registering ${AGENTS} agents for people search\n`);
    await sql`insert into ${sql(schema)}.principals ${sql(
      Array.from({ length: AGENTS }, (_, i) => ({
        id: String(9_000_000_000_000 + i),
        kind: "agent",
        display_name: `fleet-agent-${word(pick(Math.random()))}-${i}`,
      })),
      "id",
      "kind",
      "display_name",
    )}`;
    await sql.unsafe(`analyze "${schema}".messages; analyze "${schema}".principals`);

    let refused = 0;
    const timed = async (path: string) => {
      const t = performance.now();
      const r = await fetch(url + path, { headers: { authorization: `Bearer ${A.token}` } });
      await r.arrayBuffer();
      if (r.status === 503) refused++;
      else if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
      return performance.now() - t;
    };
    const queries: [string, string][] = [
      ["a word no message holds", "nosuchword"],
      ["a rare word", word(4000)],
      ["a word of every 50th message or so", word(20)],
      ["the commonest word", word(0)],
      ["two words", `${word(3)} ${word(7)}`],
      ["a phrase", `"${word(0)} ${word(1)}"`],
      ["a word, excluding another", `${word(5)} -${word(0)}`],
    ];
    const lines: string[] = [
      `search over ${n} messages in the caller's group and ${n} in another (Postgres, one node, ${rounds} rounds each)`,
    ];
    const all: number[] = [];
    for (const [what, q] of queries) {
      const path = `/v1/search/messages?q=${encodeURIComponent(q)}`;
      await timed(path);
      const ms: number[] = [];
      for (let i = 0; i < rounds; i++) ms.push(await timed(path));
      all.push(...ms);
      lines.push(`  messages, ${what} (${q}): ${fmt(stats(ms))}`);
    }
    lines.push(`  messages, every query above: ${fmt(stats(all))}`);
    for (const q of ["fleet", "agent-w1", "f", "search-b", "zz"]) {
      const path = `/v1/search/people?q=${encodeURIComponent(q)}`;
      const ms: number[] = [];
      for (let i = 0; i < rounds; i++) ms.push(await timed(path));
      lines.push(`  people among ${AGENTS} agents (${q}): ${fmt(stats(ms))}`);
    }

    // the bystander alone, then beside PARALLEL searches
    const bystander = async (until: number) => {
      const ms: number[] = [];
      while (performance.now() < until) ms.push(await timed("/v1/agents/me"));
      return ms;
    };
    const alone = await bystander(performance.now() + PARALLEL_SECONDS * 1000);
    const end = performance.now() + PARALLEL_SECONDS * 1000;
    const searched: number[] = [];
    const [beside] = await Promise.all([
      bystander(end),
      pool(
        Array.from({ length: PARALLEL }, (_, i) => i),
        PARALLEL,
        async (i) => {
          while (performance.now() < end)
            searched.push(await timed(`/v1/search/messages?q=${encodeURIComponent(queries[i % queries.length]![1])}`));
        },
      ),
    ]);
    const s0 = stats(alone);
    const s1 = stats(beside);
    lines.push(
      `  ${PARALLEL} searches at once for ${PARALLEL_SECONDS} s: ${searched.length} searches, ${fmt(stats(searched))}`,
    );
    lines.push(`  bystander GET /v1/agents/me alone: ${fmt(s0)}`);
    lines.push(
      `  bystander beside them: ${fmt(s1)}; delay at p50 ${(s1.p50 - s0.p50).toFixed(1)} ms, at p99 ${(s1.p99 - s0.p99).toFixed(1)} ms`,
    );
    lines.push(`  searches refused (503: a statement past its bound, or the node's searches all busy): ${refused}`);
    process.stdout.write(lines.join("\n") + "\n");
    return 0;
  } finally {
    await flock.stop();
    // BENCH_SEARCH_KEEP=1 keeps the schema, to read the statements' plans afterwards
    if (process.env["BENCH_SEARCH_KEEP"] === "1") process.stderr.write(`[search] kept schema ${schema}\n`);
    else await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  }
}
