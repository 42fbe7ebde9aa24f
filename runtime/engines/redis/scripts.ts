// Loads every Lua script in runtime/scripts once, as an ioredis command. File names are
// `<command>-<numberOfKeys>.lua`; each file opens with its KEYS/ARGV/returns contract.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";

const DIR = fileURLToPath(new URL("../../scripts/", import.meta.url));

type Arg = string | number | Buffer;

/** The scripted commands, as ioredis adds them to a client. */
export interface ScriptCommands {
  take(bucket: string, capacity: Arg, windowMs: Arg, nowMs: Arg, cost: Arg): Promise<[number, number, number, number]>;
  strike(strikes: string, ban: string, nowMs: Arg, windowMs: Arg, threshold: Arg, banMs: Arg): Promise<number>;
}

export type ScriptedRedis = Redis & ScriptCommands;

export function defineScripts(redis: Redis): ScriptedRedis {
  for (const file of readdirSync(DIR)) {
    const m = /^([a-z][a-zA-Z0-9]*)-(\d+)\.lua$/.exec(file);
    if (!m) continue;
    redis.defineCommand(m[1]!, { numberOfKeys: Number(m[2]), lua: readFileSync(DIR + file, "utf8") });
  }
  return redis as ScriptedRedis;
}
