// One root logger; everything else takes a child of it. Tokens are never logged (redacted if they slip in).
import { pino, type Logger } from "pino";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { svc: "flock" },
    redact: { paths: ["token", "*.token", "authorization", "*.authorization"], censor: "[redacted]" },
  });
}
