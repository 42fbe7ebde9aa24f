// Hostile inputs for the property tests of the request schemas (test/unit/schemas.test.ts) and the HTTP fuzz test
// (test/fuzz.test.ts): arbitrary JSON, deep nesting, strings with NUL and lone surrogates, huge and fractional
// numbers, wrong types, each aimed at a schema's own field names so that the deeper checks are reached too.
import fc from "fast-check";
import { z } from "zod";
import { Metrics } from "../../runtime/metrics.ts";
import { allRoutes } from "../../handlers/index.ts";
import type { Route } from "../../runtime/http/route.ts";
import { wellFormed } from "../../schema/common.ts";

/** The fixed seed: a failure found in CI is found again on any machine (FLOCK_FUZZ_SEED explores others by hand). */
export const FUZZ_SEED = Number(process.env["FLOCK_FUZZ_SEED"] ?? 16_0006);

/** Every route the server mounts (a new route is fuzzed without touching the tests). */
export function everyRoute(): Route[] {
  return allRoutes(new Metrics());
}

/** A per-route seed derived from the fixed seed and the route, so that adding a route changes no other's cases. */
export function routeSeed(route: Route): number {
  let h = FUZZ_SEED;
  for (const c of `${route.method} ${route.path}`) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

/** The field names an object schema declares, looking through optional, default, refine and transform wrappers. */
export function fieldNames(schema: z.ZodType | undefined): string[] {
  let s: unknown = schema;
  for (let i = 0; i < 10 && s; i++) {
    if (s instanceof z.ZodObject) return Object.keys(s.shape);
    if (s instanceof z.ZodPipe) s = s.in;
    else if (s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable) s = s.unwrap();
    else return [];
  }
  return [];
}

const nastyChars = [
  "\u0000",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\ufffe",
  "\uffff",
  "\u202e",
  "\u200b",
  "\ufeff",
  "😀",
  "é",
  " ",
  "\t",
  "\n",
  "\\",
  '"',
  "'",
  "%",
  "&",
  "=",
  "?",
  "#",
  "/",
  "_",
  ".",
  "-",
  "+",
  "0",
  "9",
  "a",
  "P",
  "x",
];

/** Short strings built from troublesome code units (NUL, lone surrogates, separators) and ordinary ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...nastyChars), maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      maxLength: 12,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "x".repeat(5000),
      "😀".repeat(4001),
      "\ud800".repeat(300),
      "9".repeat(40),
      "0x" + "f".repeat(40),
      "0x" + "aB".repeat(20),
      "eip155:" + "9".repeat(13),
      "-1",
      "1.5",
      "1e400",
      "NaN",
      "Infinity",
      "moment_" + "9".repeat(25),
      "group_-1",
      "thread_",
      "msg_1.5",
      "P" + "9".repeat(20),
      "__proto__",
      "constructor",
    ),
  },
);

/** Numbers JSON can carry, and the edges of what JavaScript makes of them. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -0,
    0.5,
    1.5,
    -1,
    1e21,
    2 ** 53 + 2,
    -(2 ** 63),
    1e308,
    5e-324,
    999_999_999.999_999_9,
    0.000_000_1,
  ),
);

/** Plausible strings for any field: the given ids and words, numbers as text, and their near misses. */
function plausibleString(pool: readonly string[]): fc.Arbitrary<string> {
  const words = [
    "public",
    "friends",
    "private",
    "sent",
    "received",
    "start",
    "stop",
    "0",
    "1",
    "20",
    "100",
    "101",
    "30",
    "31",
    "0.5",
  ];
  return fc.constantFrom(...pool, ...words);
}

/** A plausible string with one troublesome code unit before, inside or after it: what gets past a loose check. */
function nearMiss(pool: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(plausibleString(pool), fc.constantFrom("\u0000", "\ud800", "\udfff", " ", "%", "\\", "_", "'"), fc.nat())
    .map(([s, c, at]) => {
      const i = at % (s.length + 1);
      return s.slice(0, i) + c + s.slice(i);
    });
}

/** Any JSON value, hostile at the leaves, up to a few levels deep. */
export function hostileJson(pool: readonly string[]): fc.Arbitrary<unknown> {
  const leaf: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 3, arbitrary: hostileString },
    { weight: 2, arbitrary: nearMiss(pool) },
    { weight: 2, arbitrary: plausibleString(pool) },
    { weight: 2, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.array(tie("tree"), { maxLength: 4 }),
      fc.dictionary(fc.oneof(hostileString, fc.constantFrom("a", "id", "members")), tie("tree"), { maxKeys: 4 }),
    ),
  }));
  return fc.oneof({ weight: 3, arbitrary: tree }, { weight: 1, arbitrary: fc.jsonValue() });
}

/** A JSON object that names a schema's fields (each present or not) with hostile or plausible values, plus extras. */
export function bodyObject(fields: readonly string[], pool: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const value = fc.oneof(
    { weight: 4, arbitrary: plausibleString(pool) },
    { weight: 3, arbitrary: hostileJson(pool) },
    { weight: 2, arbitrary: fc.array(fc.oneof(plausibleString(pool), hostileString), { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.array(plausibleString(pool), { minLength: 1001, maxLength: 1001 }) },
  );
  const named = fc.tuple(
    ...fields.map((f) =>
      fc.option(
        value.map((v) => [f, v] as const),
        { nil: undefined },
      ),
    ),
  );
  const extra = fc.dictionary(hostileString, hostileJson(pool), { maxKeys: 2 });
  return fc.tuple(named, extra, fc.boolean()).map(([pairs, more, extrasFirst]) => {
    const own: Record<string, unknown> = {};
    for (const p of pairs) if (p) own[p[0]] = p[1];
    return extrasFirst ? { ...more, ...own } : { ...own, ...more };
  });
}

/** Number tokens JSON.stringify never writes: out of double range, longer than a double holds, negative zero. */
const rawNumbers = [
  "1e400",
  "-1e400",
  "1e-400",
  "-0",
  "123456789012345678901234567890",
  "1.00000000000000000001",
  "0.1e1",
  "1E2",
];

/** Bodies that are not JSON at all, or JSON no serializer would produce. */
const rawBodies = [
  "",
  " ",
  "{",
  "}",
  "nul",
  "[1,]",
  '{"a":1}garbage',
  "\ufeff{}",
  '{"a":1,"a":2}',
  '{"__proto__":{"polluted":1}}',
  '"\\u0000"',
  '"\\ud800"',
  '{"x":"\\udc00\\ud800"}',
  "[".repeat(5000) + "]".repeat(5000),
  '{"a":'.repeat(3000) + '"\\u0000"' + "}".repeat(3000),
  "[".repeat(40) + "1" + "]".repeat(40),
  "\u0000",
];

/** The text of a request body: mostly objects naming the schema's fields, then wrong types and broken JSON. */
export function bodyText(fields: readonly string[], pool: readonly string[]): fc.Arbitrary<string> {
  const objects = bodyObject(fields, pool);
  const withRawNumber = fc
    .tuple(objects, fc.constantFrom(...(fields.length > 0 ? fields : ["a"])), fc.constantFrom(...rawNumbers))
    .map(([o, f, n]) => JSON.stringify({ ...o, [f]: "@@RAW@@" }).replace('"@@RAW@@"', n));
  const deepField = fc
    .tuple(objects, fc.constantFrom(...(fields.length > 0 ? fields : ["a"])), fc.integer({ min: 30, max: 2500 }))
    .map(([o, f, d]) =>
      JSON.stringify({ ...o, [f]: "@@RAW@@" }).replace('"@@RAW@@"', "[".repeat(d) + '"\\u0000"' + "]".repeat(d)),
    );
  return fc.oneof(
    { weight: 8, arbitrary: objects.map((o) => JSON.stringify(o)) },
    { weight: 2, arbitrary: hostileJson(pool).map((v) => JSON.stringify(v) ?? "null") },
    { weight: 1, arbitrary: withRawNumber },
    { weight: 1, arbitrary: deepField },
    { weight: 1, arbitrary: fc.constantFrom(...rawBodies) },
  );
}

/** Values a query parameter may carry (after decoding). */
function queryValue(pool: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: plausibleString(pool) },
    { weight: 2, arbitrary: nearMiss(pool) },
    { weight: 3, arbitrary: hostileString },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...rawNumbers,
        "NaN",
        "Infinity",
        "-Infinity",
        " 5",
        "0x10",
        "1_000",
        "",
        "9".repeat(25),
      ),
    },
  );
}

/** A decoded query: the schema's own parameters (present or not) and a stray one now and then. */
export function queryObject(fields: readonly string[], pool: readonly string[]): fc.Arbitrary<Record<string, string>> {
  // Each parameter absent half the time, so that a bad value in one is often the only one (and reaches the handler).
  const named = fc.tuple(
    ...fields.map((f) =>
      fc.option(
        queryValue(pool).map((v) => [f, v] as const),
        { nil: undefined, freq: 2 },
      ),
    ),
  );
  return fc.tuple(named, fc.dictionary(hostileString, queryValue(pool), { maxKeys: 1 })).map(([pairs, more]) => {
    const q: Record<string, string> = { ...more };
    for (const p of pairs) if (p) q[p[0]] = p[1];
    return q;
  });
}

/** Query strings as sent: encoded objects, and raw strings with broken escapes and repeated keys. */
export function queryText(fields: readonly string[], pool: readonly string[]): fc.Arbitrary<string> {
  const f = fields.length > 0 ? fields : ["a"];
  const broken = fc
    .tuple(
      fc.constantFrom(...f),
      fc.constantFrom("%", "%zz", "%ED%A0%80", "%00", "%C0%80", "%FF", "a%2", "1&x=%", "+1", "%2B1", "1%00"),
    )
    .map(([k, v]) => `${k}=${v}`);
  const repeated = fc
    .tuple(fc.constantFrom(...f), queryValue(pool), queryValue(pool))
    .map(([k, a, b]) => `${k}=${encodeURIComponent(wellFormed(a))}&${k}=${encodeURIComponent(wellFormed(b))}`);
  return fc.oneof(
    { weight: 6, arbitrary: queryObject(fields, pool).map((q) => new URLSearchParams(q).toString()) },
    { weight: 1, arbitrary: broken },
    { weight: 1, arbitrary: repeated },
  );
}

/** Ids for path parameters, already encoded for a URL: real ones from `pool`, near misses and junk. */
export function pathParam(pool: readonly string[]): fc.Arbitrary<string> {
  const junk = [
    "abc",
    "0",
    "-1",
    "1.5",
    "99999999999999999999",
    "9223372036854775808",
    "moment_99999999999999999999",
    "P",
    "P1",
    "moment_",
    "group_1",
    "thread_1",
    "msg_1",
    "file_1",
    "freq_1",
    "%00",
    "moment_%00",
    "%ED%A0%80",
    "%F0%9F%98%80",
    "%2F",
    "..",
    "%25",
    "x".repeat(300),
    "9".repeat(300),
  ];
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...pool).map(encodeURIComponent) },
    { weight: 2, arbitrary: fc.constantFrom(...junk) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length > 0).map((s) => encodeURIComponent(wellFormed(s))) },
  );
}
