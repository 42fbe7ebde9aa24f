// Optional OpenTelemetry tracing of a send (docs/OPERATIONS.md, "Tracing"), from its request through its commit to its
// delivery on whichever node holds the recipient. Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then nothing of
// OpenTelemetry is loaded, svc.tracing is undefined, and each place a send passes only checks that. On, the SDK and its
// spans are runtime/tracing-sdk.ts, imported here on demand. Built and stopped (flushed) by startServices
// (runtime/node.ts) as the part `tracing`.
import type { Config } from "./config.ts";
import type { Published } from "./engines/stream-log.ts";
import type { Logger } from "./log.ts";

export type CommitKind = "direct" | "group";

/** What a local delivery reached: the sockets taking the stream on this node, the waiters (long polls, MCP) woken. */
export type Reach = readonly [sockets: number, woken: number];

/** The spans of a send. Every method is cheap to call outside a traced send: it runs what it wraps and records nothing. */
export interface Tracing {
  /**
   * A traced route's request (a SERVER span `<METHOD> <route>`, continuing the caller's `traceparent` header if it
   * sent one), its answer's status recorded; everything `run` starts is inside it.
   */
  request<R extends { status: number }>(
    method: string,
    route: string,
    headers: Record<string, string>,
    run: () => Promise<R>,
  ): Promise<R>;
  /** A message about to wait for its batch's statement: it belongs to the send running now (if one is traced). */
  batched(message: object): void;
  /**
   * A batch's statement (`run`, one outcome per message): a `commit` span in each queued message's own trace, with the
   * batch's size, so one trace per send holds however many sends share the commit.
   */
  commit<O>(
    kind: CommitKind,
    messages: readonly { id: bigint }[],
    run: () => Promise<(O | Error)[]>,
  ): Promise<(O | Error)[]>;
  /** The append of a committed message to its stream and its announcement to every node; `run` gets the traceparent to carry. */
  publish<T>(m: Published, run: (traceparent: string | undefined) => Promise<T>): Promise<T>;
  /**
   * A committed message offered to this node's sockets and long polls (`offer`): a `deliver` span when it reached
   * any, the child of the send running here, or (`remote`: it came from another node) of the traceparent it came with.
   */
  deliver(m: Published, remote: { traceparent?: string } | undefined, offer: () => Reach): void;
  /** Export what is still buffered, then stop. */
  stop(): Promise<void>;
}

/** Tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (the SDK loaded and started), else undefined. */
export async function startTracing(config: Config, log: Logger, nodeId: number): Promise<Tracing | undefined> {
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined) return undefined;
  const { startSdk } = await import("./tracing-sdk.ts");
  return startSdk(config.OTEL_EXPORTER_OTLP_ENDPOINT, log, nodeId);
}
