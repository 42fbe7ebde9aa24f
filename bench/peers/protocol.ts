// What bench/peers/run.ts and its receiver processes say to each other over IPC.

/** Latency histogram: 0.1 ms buckets up to 5 s; the last bucket holds everything slower. */
export const HIST_RES_MS = 0.1;
export const HIST_BUCKETS = 50_001;

export type AckMode = "each" | "batch" | "none";

/** One member's connection: which server kind, its URL, and for Flock its token, for Socket.IO the client module. */
export interface Target {
  kind: "flock" | "uws" | "soketi" | "socketio";
  url: string;
  token?: string;
  module?: string;
}

export type Command =
  | { type: "connect"; targets: Target[]; ack: AckMode; ackMs: number; ackMessages: number }
  | { type: "report" }
  | { type: "close" };

/** A receiver's step: [bucket, count] pairs, [seq, members that got it within 1 s] pairs, frames, its CPU ms. */
export interface Report {
  type: "report";
  hist: [number, number][];
  within: [number, number][];
  frames: number;
  cpuMs: number;
}

export type Reply = Report | { type: "connected"; n: number } | { type: "failed"; error: string };
