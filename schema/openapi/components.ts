// Zod schemas to JSON Schema components: every schema exported from schema/*.ts under its export name (the
// component name), nested named schemas as $ref, only the components actually referenced kept.
import { z } from "zod";
import * as agents from "../agents.ts";
import * as auth from "../auth.ts";
import * as blocks from "../blocks.ts";
import * as common from "../common.ts";
import * as errors from "../errors.ts";
import * as events from "../events.ts";
import * as files from "../files.ts";
import * as friends from "../friends.ts";
import * as groups from "../groups.ts";
import * as health from "../health.ts";
import * as messages from "../messages.ts";
import * as moderation from "../moderation.ts";
import * as moments from "../moments.ts";
import * as payments from "../payments.ts";
import * as push from "../push.ts";
import * as reference from "../reference.ts";
import * as search from "../search.ts";
import * as tokens from "../tokens.ts";
import * as users from "../users.ts";
import * as webhooks from "../webhooks.ts";
import * as ws from "../ws.ts";

export type JsonSchema = { [key: string]: unknown };

const MODULES: Record<string, unknown>[] = [
  common,
  errors,
  agents,
  auth,
  blocks,
  files,
  friends,
  groups,
  health,
  messages,
  events,
  moments,
  moderation,
  payments,
  push,
  reference,
  search,
  tokens,
  users,
  webhooks,
  ws,
];

/** Every schema exported under a capitalised name, by identity (the first module naming it wins). */
export function exportedNames(): Map<z.ZodType, string> {
  const names = new Map<z.ZodType, string>();
  for (const mod of MODULES) {
    for (const [name, value] of Object.entries(mod)) {
      if (/^[A-Z][A-Za-z0-9]*$/.test(name) && value instanceof z.ZodType && !names.has(value)) names.set(value, name);
    }
  }
  return names;
}

export interface ComponentSet {
  /** The component schemas by name, refs pointing at `prefix + name`. */
  schemas: Record<string, JsonSchema>;
  /** A reference to the component of `schema` (which must have been named). */
  ref(schema: z.ZodType): JsonSchema;
}

export interface ComponentOptions {
  /** Where a component lives: "#/components/schemas/". */
  prefix: string;
  /** "input" for what clients send, "output" for what they receive. */
  io: "input" | "output";
  target: "draft-2020-12" | "draft-07";
}

/**
 * Converts `roots` (and every other named schema they contain) into components. A root without an exported name
 * takes the fallback name given with it.
 */
export function buildComponents(roots: Map<z.ZodType, string | undefined>, opts: ComponentOptions): ComponentSet {
  const names = exportedNames();
  const registry = z.registry<{ id: string }>();
  const named = new Map<z.ZodType, string>();
  const add = (schema: z.ZodType, name: string) => {
    if (named.has(schema)) return;
    registry.add(schema, { id: name });
    named.set(schema, name);
  };
  for (const [schema, fallback] of roots) {
    const name = names.get(schema) ?? fallback;
    if (!name) throw new Error("a documented schema has neither an exported name nor a fallback");
    add(schema, name);
  }
  // The named schemas nested in the roots become refs too; each is converted in the same direction (io).
  for (const [schema, name] of names) add(schema, name);
  const all = z.toJSONSchema(registry, {
    target: opts.target,
    io: opts.io,
    unrepresentable: "any",
    uri: (id) => opts.prefix + id,
  }).schemas as Record<string, JsonSchema>;
  // Keep only what the roots reach.
  const keep = new Set<string>();
  const visit = (name: string) => {
    if (keep.has(name)) return;
    keep.add(name);
    for (const ref of refsIn(all[name])) if (ref.startsWith(opts.prefix)) visit(ref.slice(opts.prefix.length));
  };
  for (const schema of roots.keys()) visit(named.get(schema)!);
  const schemas: Record<string, JsonSchema> = {};
  for (const name of [...keep].sort()) {
    const { $schema: _s, $id: _i, ...rest } = all[name]!;
    schemas[name] = rest;
  }
  return {
    schemas,
    ref(schema) {
      const name = named.get(schema);
      if (!name) throw new Error("ref to an unnamed schema");
      return { $ref: opts.prefix + name };
    },
  };
}

function refsIn(value: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "$ref" && typeof x === "string") out.push(x);
        else stack.push(x);
      }
    }
  }
  return out;
}

/** A standalone JSON Schema of `schema` (query strings: inlined, no refs). */
export function inlineSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
}
