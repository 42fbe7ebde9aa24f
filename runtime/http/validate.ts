// Turns zod failures into the one error shape: 400 invalid_request naming the field(s), each issue a plain sentence
// (`content: must be 1 to 2000 characters`, `visibility: required; one of public, friends, private`).
import type { z } from "zod";
import { describeIssue } from "../../schema/issues.ts";
import { ApiError } from "../errors.ts";

export function parseWith<T extends z.ZodType>(schema: T, input: unknown, where: "body" | "query"): z.infer<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => describeIssue(i, input, where));
  const first = issues[0]!;
  return fail(first.field, `${first.field}: ${first.message}`, issues);
}

function fail(field: string, message: string, issues: { field: string; message: string }[]): never {
  throw new ApiError("invalid_request", message, { field, issues });
}

/** A query string as an object of its parameters (the last of a repeated one wins); a NUL in a value is refused. */
export function parseQueryString(raw: string): Record<string, string> {
  const query = Object.fromEntries(new URLSearchParams(raw));
  for (const [field, value] of Object.entries(query)) {
    if (value.includes("\u0000")) {
      throw new ApiError("invalid_request", `${field}: must not contain the NUL character`, {
        field,
        issues: [{ field, message: "must not contain the NUL character" }],
      });
    }
  }
  return query;
}

/** Deepest nesting a JSON body may have (no request needs more than a few levels). */
const MAX_JSON_DEPTH = 32;
/** Most values a JSON body may hold (the largest request, an MCP batch of 100 calls, needs a few thousand). */
export const MAX_JSON_VALUES = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Refuses, from the bytes and before JSON.parse sees them, a body nested deeper than MAX_JSON_DEPTH or holding more
 * than MAX_JSON_VALUES values (counted by their separators): parsing either costs far more than reading it (V8 took
 * about 125 ms for 1 MiB of arrays nested 520,000 deep, and an MCP call with 90,000 argument keys held the event loop
 * 260-430 ms after it), and this pass is one look at each byte. Strings are skipped, escapes and all.
 */
function checkShape(buf: Buffer): void {
  let depth = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH)
        throw new ApiError("invalid_request", `request body is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    } else if (c === COMMA && ++values > MAX_JSON_VALUES) {
      throw new ApiError("invalid_request", `request body holds too many values (at most ${MAX_JSON_VALUES})`);
    }
  }
}

export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError("invalid_request", "request body is required");
  checkShape(buf);
  const text = buf.toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_request", "request body is not valid JSON");
  }
  // Postgres text cannot hold U+0000: refuse it here rather than fail half-way through a write.
  checkTree(value, text.includes("\\u0000"));
  return value;
}

/** A value met while walking a body: where it sits, for naming the field of a NUL. */
interface Node {
  v: unknown;
  key: string;
  parent: Node | null;
  depth: number;
}

/**
 * Walks the parsed body without recursion (a body can nest far deeper than the stack): refuses nesting deeper than
 * MAX_JSON_DEPTH and, when `nul` says the text escapes one, a string holding U+0000.
 */
function checkTree(root: unknown, nul: boolean): void {
  if (root === null || typeof root !== "object") {
    if (nul) rejectNulAt(root, null);
    return;
  }
  const stack: Node[] = [{ v: root, key: "", parent: null, depth: 1 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.v;
    if (v !== null && typeof v === "object") {
      if (node.depth > MAX_JSON_DEPTH) {
        throw new ApiError("invalid_request", `request body is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
      }
      const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, x] = entries[i]!;
        stack.push({ v: x, key, parent: node, depth: node.depth + 1 });
      }
    } else if (nul) {
      rejectNulAt(v, node);
    }
  }
}

function rejectNulAt(v: unknown, node: Node | null): void {
  if (typeof v !== "string" || !v.includes("\u0000")) return;
  const keys: string[] = [];
  for (let n = node; n && n.parent; n = n.parent) keys.push(n.key);
  const field = keys.reverse().join(".") || "body";
  throw new ApiError("invalid_request", `${field}: must not contain the NUL character`, {
    field,
    issues: [{ field, message: "must not contain the NUL character" }],
  });
}
