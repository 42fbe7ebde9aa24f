// Loads every Lua script in runtime/scripts once, as an ioredis command. File names are
// `<command>-<numberOfKeys>.lua`, or `<command>-n.lua` for a script taking any number of keys (the
// caller passes the count first); each file opens with its KEYS/ARGV/returns contract.
import { join } from "node:path";
import { readdirSync, readFileSync } from "node:fs";
import type { Cluster, Redis } from "ioredis";
import { projectPath } from "../../paths.ts";

const DIR = projectPath("runtime", "scripts");

type Arg = string | number | Buffer;

/** The scripted commands, as ioredis adds them to a client. */
interface ScriptCommands {
  take(bucket: string, capacity: Arg, windowMs: Arg, nowMs: Arg, cost: Arg): Promise<[number, number, number, number]>;
  strike(strikes: string, ban: string, nowMs: Arg, windowMs: Arg, threshold: Arg, banMs: Arg): Promise<number>;
  feedRead(timeline: string, bound: Arg, count: Arg, lease: Arg, leaseTtlMs: Arg): Promise<string[]>;
  feedPush(timeline: string, id: Arg, depth: Arg): Promise<number>;
  feedPushMany(numKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  feedFill(timeline: string, lease: Arg, depth: Arg, floor: Arg, ttlMs: Arg, ...ids: Arg[]): Promise<number>;
  nodeAcquire(ids: string, leases: string, owner: Arg, nowMs: Arg, ttlMs: Arg, start: Arg): Promise<number>;
  nodeRenew(ids: string, leases: string, owner: Arg, id: Arg, nowMs: Arg, ttlMs: Arg): Promise<number>;
  nodeRelease(ids: string, leases: string, owner: Arg, id: Arg): Promise<number>;
  nodeAnnounce(releases: string, leases: string, owner: Arg, release: Arg, nowMs: Arg): Promise<number>;
  layoutRaise(layout: string, mine: Arg): Promise<number>;
  presenceConnect(key: string, nowMs: Arg, expiryMs: Arg, connId: Arg, ttlMs: Arg): Promise<number>;
  presenceDisconnect(key: string, nowMs: Arg, connId: Arg): Promise<number>;
  streamAppend(
    log: string,
    seq: Arg,
    id: Arg,
    payload: Arg,
    max: Arg,
    idleMs: Arg,
    channel: Arg,
    head: Arg,
  ): Promise<number>;
  streamCursorMerge(numKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  feedPage(numKeys: number, ...keysThenArgs: Arg[]): Promise<(string | number | null)[]>;
  momentsStore(numKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  momentsForget(numKeys: number, ...keysThenArgs: Arg[]): Promise<number>;
  webhookEnqueue(jobs: string, queued: string, group: Arg, ...agents: Arg[]): Promise<number>;
  webhookRenew(jobs: string, group: Arg, consumer: Arg, ...entries: Arg[]): Promise<string[]>;
  webhookFinish(jobs: string, queued: string, group: Arg, entry: Arg, agent: Arg): Promise<number>;
}

/** A client with the scripts: one Redis, or a Redis Cluster (each script's keys then share one slot). */
export type ScriptedRedis = (Redis | Cluster) & ScriptCommands;

export function defineScripts(redis: Redis | Cluster): ScriptedRedis {
  for (const file of readdirSync(DIR)) {
    const m = /^([a-z][a-zA-Z0-9]*)-(\d+|n)\.lua$/.exec(file);
    if (!m) continue;
    const numberOfKeys = m[2] === "n" ? undefined : Number(m[2]);
    redis.defineCommand(m[1]!, { numberOfKeys, lua: readFileSync(join(DIR, file), "utf8") });
  }
  return redis as ScriptedRedis;
}
