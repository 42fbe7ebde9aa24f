// zod issues as plain sentences that name the rule ("must be 1 to 2000 characters", "required; one of public,
// friends, private"), instead of the schema library's wording ("Too small: expected string to have >=1 characters").
// A message a schema gives itself (lowercase, "must be an agent or human id") is kept as it is. Used for request
// bodies and queries (runtime/http/validate.ts) and anywhere else a zod failure reaches a person.
import type { z } from "zod";

export interface IssueText {
  /** The dotted path of the field ("content", "members.2"), or `where` for the input as a whole. */
  field: string;
  /** What is wrong, without the field's name: "must be at most 2000 characters". */
  message: string;
}

/** zod's own (English) messages start so; a schema's own messages are lowercase sentences and are kept. */
const LIBRARY_WORDING =
  /^(Invalid|Too (small|big)|Unrecognized key|Expected|Required|Number must|String must|Array must)/;

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  date: "a date",
  null: "null",
};

const UNITS: Record<string, [string, string]> = {
  string: ["character", "characters"],
  array: ["item", "items"],
  set: ["item", "items"],
  file: ["byte", "bytes"],
};

const plural = (n: number | bigint, origin: string): string => {
  const u = UNITS[origin];
  return u ? `${n} ${Number(n) === 1 ? u[0] : u[1]}` : String(n);
};

/** A list of allowed values as the reader would type them: `public, friends, private`. */
const listOf = (values: readonly unknown[]): string =>
  values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");

/** The value at `path` in `input`, or undefined when it (or anything on the way) is absent. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** One issue as a field and a sentence; `input` is what was validated (to tell a missing field from a wrong one). */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown, where: string): IssueText {
  const path = issue.path.map(String);
  const field = path.length > 0 ? path.join(".") : where;
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys;
    const at = path.length > 0 ? `${field}.` : "";
    return {
      field: `${at}${keys[0] ?? ""}`,
      message: keys.length === 1 ? "is not a known field" : `not known fields: ${keys.join(", ")}`,
    };
  }
  if (!LIBRARY_WORDING.test(issue.message)) return { field, message: issue.message };
  const missing = path.length > 0 && valueAt(input, issue.path) === undefined;
  return { field, message: sentence(issue, missing) };
}

function sentence(issue: z.core.$ZodIssue, missing: boolean): string {
  switch (issue.code) {
    case "invalid_type": {
      const what = TYPE_NAMES[issue.expected] ?? issue.expected;
      return missing ? `required (${what})` : `must be ${what}`;
    }
    case "invalid_value": {
      const one = issue.values.length === 1;
      if (missing)
        return one ? `required; must be ${listOf(issue.values)}` : `required; one of ${listOf(issue.values)}`;
      return one ? `must be ${listOf(issue.values)}` : `must be one of ${listOf(issue.values)}`;
    }
    case "too_small": {
      if (missing) return "required";
      const n = issue.minimum;
      if (issue.origin === "string" && Number(n) === 1) return "must not be empty";
      if (issue.exact) return `must be exactly ${plural(n, issue.origin)}`;
      if (UNITS[issue.origin]) return `must be at least ${plural(n, issue.origin)}`;
      return issue.inclusive === false ? `must be more than ${n}` : `must be at least ${n}`;
    }
    case "too_big": {
      const n = issue.maximum;
      if (issue.exact) return `must be exactly ${plural(n, issue.origin)}`;
      if (UNITS[issue.origin]) return `must be at most ${plural(n, issue.origin)}`;
      return issue.inclusive === false ? `must be less than ${n}` : `must be at most ${n}`;
    }
    case "invalid_format":
      if (missing) return "required";
      if (issue.format === "regex") return "is not in the expected format";
      if (issue.format === "starts_with" || issue.format === "ends_with" || issue.format === "includes")
        return `is not in the expected format (${issue.format.replace("_", " ")})`;
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_union":
      return missing ? "required" : "is not any of the accepted forms";
    case "invalid_key":
      return "has a key that is not allowed";
    case "invalid_element":
      return "has a value that is not allowed";
    default:
      return missing ? "required" : "is not valid";
  }
}
