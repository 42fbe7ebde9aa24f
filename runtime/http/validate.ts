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
      throw new ApiError("invalid_request", `${field}: must not contain the NUL character`, { field, issues: [{ field, message: "must not contain the NUL character" }] });
    }
  }
  return query;
}

/** Deepest nesting a JSON body may have (no request needs more than a few levels). */
const MAX_JSON_DEPTH = 32;

export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new ApiError("invalid_request", "request body is required");
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
  throw new ApiError("invalid_request", `${field}: must not contain the NUL character`, { field, issues: [{ field, message: "must not contain the NUL character" }] });
}
