// The OpenTelemetry side of runtime/tracing.ts, imported only when tracing is on: the NodeSDK with the OTLP/HTTP (JSON)
// trace exporter behind a batch span processor (both set by the standard OTEL_* variables), and a send's spans, made
// by hand with @opentelemetry/api (no auto-instrumentation: uWS is not node:http). Metrics stay Prometheus's and logs
// pino's: the SDK exports neither. Inside a node a send's context follows its awaits (the SDK's AsyncLocalStorage
// context manager); between nodes it rides on the `stream.message` announcement as a W3C traceparent.
import { hostname } from "node:os";
import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { core, NodeSDK, resources } from "@opentelemetry/sdk-node";
import {
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from "@opentelemetry/semantic-conventions";
import { isOutage } from "./circuit.ts";
import { CHANNELS } from "./engines/node-channels.ts";
import type { Published } from "./engines/stream-log.ts";
import { ApiError } from "./errors.ts";
import { PREFIX } from "./ids.ts";
import type { Logger } from "./log.ts";
import type { CommitKind, Reach, Tracing } from "./tracing.ts";

/** How long stopping waits for the last spans to be exported (a collector out of reach must not hold a shutdown). */
const FLUSH_MS = 3000;

// Messaging attributes are still incubating in the semantic conventions: named here, as their authors advise.
const MESSAGING_SYSTEM = "messaging.system";
const MESSAGING_DESTINATION = "messaging.destination.name";
const MESSAGING_OPERATION = "messaging.operation.type";
const MESSAGING_MESSAGE_ID = "messaging.message.id";

/** The message's id as clients see it (`msg_…`), on every span of its send. */
const messageId = (raw: string | bigint) => PREFIX.message + String(raw);

function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.setAttribute(ATTR_ERROR_TYPE, err instanceof ApiError ? err.code : err instanceof Error ? err.name : "error");
}

class SdkTracing implements Tracing {
  /** The send each message waiting for its batch belongs to (its request's context). */
  private readonly sends = new WeakMap<object, Context>();
  /** The traceparent on `stream.message` is W3C's whatever OTEL_PROPAGATORS says for HTTP: it is Flock's own field. */
  private readonly w3c = new core.W3CTraceContextPropagator();

  constructor(
    private readonly sdk: NodeSDK,
    private readonly tracer: Tracer,
    private readonly log: Logger,
  ) {}

  async request<R extends { status: number }>(
    method: string,
    route: string,
    headers: Record<string, string>,
    run: () => Promise<R>,
  ): Promise<R> {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const attributes = { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: route };
    const span = this.tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent);
    let status = 500;
    let error: unknown;
    try {
      const reply = await context.with(trace.setSpan(parent, span), run);
      status = reply.status;
      return reply;
    } catch (err) {
      // as the pipeline answers it (runtime/http/pipeline.ts): an ApiError its status, an outage 503, the rest 500
      status = err instanceof ApiError ? err.status : isOutage(err) ? 503 : 500;
      error = err;
      throw err;
    } finally {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // a server span fails on a 5xx only (a 4xx is the caller's), its error.type the status
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR, ...(error instanceof Error ? { message: error.message } : {}) });
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
      }
      span.end();
    }
  }

  batched(message: object): void {
    const ctx = context.active();
    if (trace.getSpan(ctx) !== undefined) this.sends.set(message, ctx);
  }

  async commit<O>(
    kind: CommitKind,
    messages: readonly { id: bigint }[],
    run: () => Promise<(O | Error)[]>,
  ): Promise<(O | Error)[]> {
    const attributes: Attributes = {
      "flock.send.kind": kind,
      "flock.batch.size": messages.length,
      [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
    };
    const spans = messages.map((m) => {
      const parent = this.sends.get(m);
      return parent === undefined
        ? undefined
        : this.tracer.startSpan("commit", { kind: SpanKind.INTERNAL, attributes }, parent);
    });
    let out: (O | Error)[];
    try {
      out = await run();
    } catch (err) {
      for (const s of spans) {
        if (s === undefined) continue;
        failed(s, err);
        s.end();
      }
      throw err;
    }
    messages.forEach((m, i) => {
      const s = spans[i];
      if (s === undefined) return;
      // the id after the statement: a clash gives the message a new one (runtime/messaging/hub.ts)
      const id = messageId(m.id);
      s.setAttribute("flock.message.id", id);
      trace.getSpan(this.sends.get(m)!)?.setAttribute("flock.message.id", id);
      const o = out[i];
      if (o instanceof Error) failed(s, o);
      s.end();
    });
    return out;
  }

  async publish<T>(m: Published, run: (traceparent: string | undefined) => Promise<T>): Promise<T> {
    const parent = context.active();
    // outside a send (the position check filling a publish that never came) there is no trace to carry
    if (trace.getSpan(parent) === undefined) return run(undefined);
    const span = this.tracer.startSpan(
      `publish ${CHANNELS.streamMessage.name}`,
      { kind: SpanKind.PRODUCER, attributes: { ...this.messaging(m), [MESSAGING_OPERATION]: "send" } },
      parent,
    );
    const carrier: { traceparent?: string } = {};
    this.w3c.inject(trace.setSpan(parent, span), carrier, defaultTextMapSetter);
    try {
      return await run(carrier.traceparent);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  deliver(m: Published, remote: { traceparent?: string } | undefined, offer: () => Reach): void {
    // from another node, only the context it came with: this node's own active context is no send's
    let parent: Context | undefined;
    if (remote === undefined) parent = context.active();
    else if (remote.traceparent !== undefined)
      parent = this.w3c.extract(ROOT_CONTEXT, { traceparent: remote.traceparent }, defaultTextMapGetter);
    if (parent === undefined || trace.getSpan(parent) === undefined) {
      offer();
      return;
    }
    const startTime = performance.now();
    const [sockets, woken] = offer();
    // every node hears every message: a span only where it reached someone
    if (sockets === 0 && woken === 0) return;
    const attributes: Attributes = {
      ...this.messaging(m),
      [MESSAGING_OPERATION]: "process",
      "flock.delivery.sockets": sockets,
      "flock.delivery.woken": woken,
    };
    const kind = remote === undefined ? SpanKind.INTERNAL : SpanKind.CONSUMER;
    this.tracer.startSpan("deliver", { kind, attributes, startTime }, parent).end();
  }

  private messaging(m: Published): Attributes {
    return {
      [MESSAGING_SYSTEM]: "redis",
      [MESSAGING_DESTINATION]: CHANNELS.streamMessage.name,
      [MESSAGING_MESSAGE_ID]: messageId(m.id),
      "flock.message.id": messageId(m.id),
      "flock.stream.seq": m.seq,
    };
  }

  async stop(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => (timer = setTimeout(resolve, FLUSH_MS, "late")));
    try {
      const done = await Promise.race([this.sdk.shutdown().then(() => "done" as const), late]);
      if (done === "late") this.log.warn({ ms: FLUSH_MS }, "tracing: the last spans were not exported in time");
    } catch (err) {
      this.log.warn({ err }, "tracing: the last spans were not exported");
    } finally {
      clearTimeout(timer);
      // the API's globals go with the SDK, so a node started again in this process registers its own
      trace.disable();
      context.disable();
      diag.disable();
      propagation.disable();
    }
  }
}

/** The traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is when set (the SDK reads it), else the base's /v1/traces. */
function tracesUrl(endpoint: string): string | undefined {
  if (process.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) return undefined;
  return `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

/** Start the SDK: service.name "flock" (or OTEL_SERVICE_NAME), service.instance.id naming this node. */
export function startSdk(endpoint: string, log: Logger, nodeId: number): Tracing {
  const instance = `node-${nodeId}@${hostname()}`;
  // what OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES say is merged over these (the SDK's environment detector)
  const resource = resources.resourceFromAttributes({
    [ATTR_SERVICE_NAME]: "flock",
    [ATTR_SERVICE_INSTANCE_ID]: instance,
    "flock.node.id": nodeId,
  });
  const url = tracesUrl(endpoint);
  const sdk = new NodeSDK({
    resource,
    // a BatchSpanProcessor around it, set by OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, ...
    traceExporter: new OTLPTraceExporter(url === undefined ? {} : { url }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  // the SDK's own complaints (an export refused, a collector out of reach) go to the node's log, not to nowhere, at
  // OTEL_LOG_LEVEL (warn when unset). Set after the SDK is made, which would put a console logger in its place. The
  // diag logger is the process's one: in a process of several nodes, the last started speaks for all
  const otel = log.child({ part: "opentelemetry" });
  const said = (args: unknown[]) => ({
    args: args.map((a) => (a instanceof Error ? { message: a.message, stack: a.stack } : a)),
  });
  diag.setLogger(
    {
      error: (message, ...args) => otel.error(said(args), message),
      warn: (message, ...args) => otel.warn(said(args), message),
      info: (message, ...args) => otel.info(said(args), message),
      debug: (message, ...args) => otel.debug(said(args), message),
      verbose: (message, ...args) => otel.trace(said(args), message),
    },
    {
      logLevel: core.diagLogLevelFromString(process.env["OTEL_LOG_LEVEL"]) ?? DiagLogLevel.WARN,
      suppressOverrideMessage: true,
    },
  );
  sdk.start();
  const where = new URL(url ?? process.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? endpoint);
  log.info({ exporter: `${where.origin}${where.pathname}`, instance }, "tracing: sends' spans exported over OTLP/HTTP");
  return new SdkTracing(sdk, trace.getTracer("flock"), log);
}
