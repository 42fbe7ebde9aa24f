// Property tests of the request schemas themselves, with no server: for any input, a body or query schema either
// succeeds or fails with a ZodError (never throws), and the body reader either returns a value or refuses with an
// ApiError. Seeded, so a failure found once is found again.
import fc from "fast-check";
import t from "tap";
import { z } from "zod";
import { ApiError } from "../../runtime/errors.ts";
import { parseJson } from "../../runtime/http/validate.ts";
import { ClientFrame } from "../../schema/ws.ts";
import {
  bodyObject,
  bodyText,
  everyRoute,
  FUZZ_SEED,
  fieldNames,
  hostileJson,
  queryObject,
  routeSeed,
} from "../helpers/fuzz.ts";

const POOL = ["123", "P123", "moment_123", "comment_123", "group_123", "thread_123", "msg_123", "file_123", "freq_123"];
const RUNS = 500;

/** safeParse must not throw, and must answer success or a ZodError. */
function parsesOrRefuses(schema: z.ZodType, input: unknown): boolean {
  const r = schema.safeParse(input);
  return r.success || r.error instanceof z.ZodError;
}

t.test("every body and query schema parses or refuses any input, never throws", async (t) => {
  const routes = everyRoute();
  t.ok(routes.some((r) => r.body) && routes.some((r) => r.query), "the route list has schemas to test");
  for (const route of routes) {
    const seed = routeSeed(route);
    if (route.body) {
      const schema = route.body;
      const fields = fieldNames(schema);
      const input = fc.oneof(bodyObject(fields, POOL), hostileJson(POOL), fc.anything());
      t.doesNotThrow(
        () =>
          fc.assert(
            fc.property(input, (v) => parsesOrRefuses(schema, v)),
            { seed, numRuns: RUNS },
          ),
        `${route.method} ${route.path} body`,
      );
    }
    if (route.query) {
      const schema = route.query;
      const fields = fieldNames(schema);
      t.doesNotThrow(
        () =>
          fc.assert(
            fc.property(queryObject(fields, POOL), (q) => parsesOrRefuses(schema, q)),
            { seed, numRuns: RUNS },
          ),
        `${route.method} ${route.path} query`,
      );
    }
  }
});

t.test("the WebSocket client frame schema parses or refuses any input", async (t) => {
  const input = fc.oneof(
    bodyObject(["type", "token", "id", "ref", "thread_id", "state"], [...POOL, "auth", "ack", "typing", "ping"]),
    fc.anything(),
  );
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(input, (v) => parsesOrRefuses(ClientFrame, v)),
      { seed: FUZZ_SEED, numRuns: RUNS },
    ),
  );
});

t.test("the JSON body reader returns a value or an ApiError for any text", async (t) => {
  const text = fc.oneof(bodyText(["a", "b"], POOL), fc.string({ unit: "binary" }));
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(text, (s) => {
        try {
          parseJson(Buffer.from(s, "utf8"));
          return true;
        } catch (err) {
          return err instanceof ApiError && err.status === 400;
        }
      }),
      { seed: FUZZ_SEED, numRuns: 2000 },
    ),
  );
});

t.test("regressions the properties found", async (t) => {
  const market = everyRoute().find((r) => r.path === "/v1/agents/marketplace")!.query!;
  t.ok(parsesOrRefuses(market, { before: "abc" }), "a refine after a failed regex does not throw (BigInt('abc'))");
  t.throws(
    () => parseJson(Buffer.from('{"a":'.repeat(5000) + '"\\u0000"' + "}".repeat(5000))),
    { code: "invalid_request" },
    "deep NUL: an ApiError, not a RangeError",
  );
});
