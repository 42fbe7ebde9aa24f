// JSON Schema (draft 2020-12, as zod 4's z.toJSONSchema writes it) to TypeScript declarations: the subset zod
// emits for plain data (objects, arrays, tuples, enums, consts, unions, nullables, records, $ref to another named
// schema). Anything else is refused loudly rather than typed loosely.

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  description?: string;
  [k: string]: unknown;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const PRIMITIVE: Record<string, string> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
};

/** The type a `$ref` names: the last path segment (zod's `uri` option gives each named schema its bare id). */
function refName(ref: string): string {
  const name = ref.split("/").pop() ?? "";
  if (!IDENT.test(name)) throw new Error(`cannot name a type after $ref "${ref}"`);
  return name;
}

function comment(text: string | undefined, indent: string): string {
  if (!text) return "";
  const lines = text.split("\n");
  if (lines.length === 1) return `${indent}/** ${text.replace(/\*\//g, "*\\/")} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l.replace(/\*\//g, "*\\/")}`).join("\n")}\n${indent} */\n`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length === 1 ? unique[0]! : unique.map((p) => (p.includes("=>") ? `(${p})` : p)).join(" | ");
}

function wrap(t: string): string {
  return /[|&]/.test(t) ? `(${t})` : t;
}

function objectType(s: JsonSchema, indent: string): string {
  const required = new Set(s.required ?? []);
  const inner = `${indent}  `;
  const lines: string[] = [];
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    const name = IDENT.test(key) ? key : JSON.stringify(key);
    lines.push(
      `${comment(prop.description, inner)}${inner}${name}${required.has(key) ? "" : "?"}: ${toType(prop, inner)};`,
    );
  }
  const extra = s.additionalProperties;
  if (extra !== undefined && extra !== false) {
    const value = extra === true ? "unknown" : toType(extra, inner);
    lines.push(`${inner}[key: string]: ${Object.keys(s.properties ?? {}).length > 0 ? "unknown" : value};`);
  }
  return lines.length === 0 ? "Record<string, never>" : `{\n${lines.join("\n")}\n${indent}}`;
}

/** The TypeScript type of one schema, written at `indent`. */
export function toType(s: JsonSchema, indent = ""): string {
  if (s.$ref) return refName(s.$ref);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return union(s.enum.map((v) => JSON.stringify(v)));
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return union(alts.map((a) => toType(a, indent)));
  if (s.allOf) return s.allOf.map((a) => wrap(toType(a, indent))).join(" & ");
  if (Array.isArray(s.type)) return union(s.type.map((t) => toType({ ...s, type: t }, indent)));
  switch (s.type) {
    case undefined:
      return "unknown";
    case "object":
      return objectType(s, indent);
    case "array":
      if (s.prefixItems) return `[${s.prefixItems.map((p) => toType(p, indent)).join(", ")}]`;
      return `${wrap(s.items ? toType(s.items, indent) : "unknown")}[]`;
    default: {
      const p = PRIMITIVE[s.type];
      if (!p) throw new Error(`no TypeScript type for JSON Schema type "${s.type}"`);
      return p;
    }
  }
}

/** One exported declaration: an interface for an object schema, a type alias for anything else. */
export function declaration(name: string, s: JsonSchema): string {
  const doc = comment(s.description, "");
  if (s.type === "object" && !s.$ref && !s.anyOf && !s.oneOf && !s.allOf && s.properties) {
    return `${doc}export interface ${name} ${objectType(s, "")}\n`;
  }
  return `${doc}export type ${name} = ${toType(s, "")};\n`;
}
