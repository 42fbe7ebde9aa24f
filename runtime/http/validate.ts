// Turns zod failures into the one error shape: 400 invalid_request naming the field(s).
import type { z } from "zod";
import { ApiError } from "../errors.ts";

export function parseWith<T extends z.ZodType>(schema: T, input: unknown, where: "body" | "query"): z.infer<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({
    field: i.path.length > 0 ? i.path.join(".") : where,
    message: i.message,
  }));
  const first = issues[0]!;
  return fail(first.field, `${first.field}: ${first.message}`, issues);
}

function fail(field: string, message: string, issues: { field: string; message: string }[]): never {
  throw new ApiError("invalid_request", message, { field, issues });
}

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
  if (text.includes("\\u0000")) rejectNul(value, "");
  return value;
}

function rejectNul(v: unknown, path: string): void {
  if (typeof v === "string") {
    if (v.includes("\u0000")) {
      const field = path || "body";
      throw new ApiError("invalid_request", `${field}: must not contain the NUL character`, { field, issues: [{ field, message: "must not contain the NUL character" }] });
    }
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => rejectNul(x, path ? `${path}.${i}` : String(i)));
  } else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) rejectNul(x, path ? `${path}.${k}` : k);
  }
}
