// The MCP sessions this node serves at /v1/mcp: one streamable HTTP transport (the SDK's web-standard one) and one
// Flock MCP server per session, acting as the principal whose bearer token opened it, through the SDK
// against this node's own API (self-url.ts). Each session subscribes to the node's wake-ups for its principal's streams (its inbox and its groups: wake.ts), so a
// new message sends notifications/resources/updated for the resources it changes. A session belongs to the node
// that created it (a load balancer must keep a session's requests on one node, or the client starts a new one).
//
// The Flock MCP server is the SDK package's (`@flock/client/mcp`, client/mcp/server.ts), the same one `flockctl mcp`
// serves over stdio. The runtime reaches it through the package's published entry, never client/'s files (the import
// fence, test/import-fence.test.ts): a built node loads the built package, and in the repository tsconfig.json's
// `paths` points type checks and tsx at its source.
//
// The MCP SDK and the Flock MCP server (with their JSON schema validators) are loaded by the first request without a
// session, not at start: a node that never serves MCP does not hold them (bench/RESULTS.md, "Idle memory (issue 30)").
import { randomUUID } from "node:crypto";
import type { FlockMcp } from "@flock/client/mcp";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { grants, type Principal } from "../auth.ts";
import { ApiError } from "../errors.ts";
import type { Ctx, Reply } from "../http/route.ts";
import type { SelfAddress } from "../self-address.ts";
import type { Services } from "../services.ts";
import { toReply, toRequest } from "./web.ts";
import { threadOfMessage } from "./wake-store.ts";
import { PrincipalWake } from "./wake.ts";

/** Sessions one principal may hold at once on a node; opening another closes its oldest. */
const PER_PRINCIPAL = 8;
/** A session without any request for this long is closed. */
const IDLE_MS = 30 * 60_000;

/** The modules a session needs, imported on the first MCP request and kept for every later one. */
let loaded: Promise<McpModules> | undefined;
const mcpModules = (): Promise<McpModules> => (loaded ??= importMcpModules());

async function importMcpModules() {
  const [transport, types, server] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@flock/client/mcp"),
  ]);
  return {
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    isInitializeRequest: types.isInitializeRequest,
    createFlockMcp: server.createFlockMcp,
  };
}

type McpModules = Awaited<ReturnType<typeof importMcpModules>>;

interface Session {
  id: string;
  principal: string;
  /** The named token that opened it (null: a full token); only that token may use it, as it acts with its scopes. */
  tokenId: string | null;
  transport: WebStandardStreamableHTTPServerTransport;
  mcp: FlockMcp;
  lastSeen: number;
  stopWake: () => void;
}

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly svc: Pick<Services, "log" | "now" | "sql" | "hub">,
    private readonly self: SelfAddress,
  ) {}

  async handle(ctx: Ctx): Promise<Reply> {
    const id = ctx.headers["mcp-session-id"];
    const principal = ctx.principal!.id;
    if (id !== undefined) {
      const s = this.sessions.get(id);
      // another principal's session is not found, nor another token's of the same principal (a session acts with
      // the scopes of the token that opened it): a session id grants nothing without its own token
      if (!s || s.principal !== principal || s.tokenId !== ctx.principal!.tokenId)
        throw new ApiError("not_found", "no such MCP session: initialize a new one");
      s.lastSeen = this.svc.now();
      return this.answer(ctx, s.transport);
    }
    const modules = await mcpModules();
    if (ctx.method !== "POST" || !modules.isInitializeRequest(ctx.body)) {
      throw new ApiError("invalid_request", "no Mcp-Session-Id: start with a POST of an initialize request");
    }
    const base = this.self.url;
    if (!base)
      throw new ApiError(
        "unavailable",
        "the MCP endpoint cannot reach this node's API",
        { retry_after: 1 },
        { "Retry-After": "1" },
      );
    const token = /^Bearer\s+(\S+)$/i.exec(ctx.headers["authorization"] ?? "")?.[1];
    // a scoped token's session offers only the tools its scopes allow (a read-only token: reading tools alone)
    const scopes = grants(ctx.principal!, "full") ? undefined : [...ctx.principal!.scopes];
    const session = this.open(modules, ctx.principal!, base, token, scopes);
    const reply = await this.answer(ctx, session.transport);
    if (!session.id) {
      // the initialize was refused (Accept, protocol version): nothing to keep
      session.stopWake();
      void session.mcp.server.close().catch(() => {});
    }
    return reply;
  }

  private open(
    { Transport, createFlockMcp }: McpModules,
    who: Principal,
    baseUrl: string,
    token: string | undefined,
    scopes: string[] | undefined,
  ): Session {
    const principal = who.id;
    const mcp = createFlockMcp({ baseUrl, token, allowRegister: false, scopes });
    const session: Session = {
      id: "",
      principal,
      tokenId: who.tokenId,
      mcp,
      lastSeen: this.svc.now(),
      stopWake: () => {},
      transport: undefined as never,
    };
    session.transport = new Transport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
        this.evictBeyondCap(principal);
        this.startSweeper();
      },
      onsessionclosed: (id) => this.drop(id),
    });
    session.transport.onclose = () => this.drop(session.id);
    const wake = new PrincipalWake(this.svc.hub, principal, (raw) => void this.wake(session, raw));
    session.stopWake = () => wake.close();
    void mcp.server.connect(session.transport);
    return session;
  }

  private async answer(ctx: Ctx, transport: WebStandardStreamableHTTPServerTransport): Promise<Reply> {
    const res = await transport.handleRequest(
      toRequest(ctx),
      ctx.method === "POST" ? { parsedBody: ctx.body } : undefined,
    );
    const reply = await toReply(res);
    // the client went away mid-stream: the stream is cancelled (the transport forgets it)
    if (reply.stream) ctx.onAborted?.(() => reply.stream?.body.destroy());
    return reply;
  }

  /** A message arrived for the session's principal: tell its subscriptions. */
  private async wake(session: Session, raw: string | null): Promise<void> {
    if (session.mcp.subscriptions.size === 0) return;
    try {
      let thread: string | null = null;
      if (raw !== null && /^\d+$/.test(raw)) {
        const id = await threadOfMessage(this.svc.sql, raw);
        if (id !== undefined) thread = `thread_${id}`;
      }
      await session.mcp.subscriptions.messageArrived(thread);
    } catch (err) {
      this.svc.log.debug({ err: (err as Error).message }, "mcp: resource update not sent");
    }
  }

  private drop(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    s.stopWake();
    void s.mcp.server.close().catch(() => {});
    if (this.sessions.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private evictBeyondCap(principal: string): void {
    const mine = [...this.sessions.values()]
      .filter((s) => s.principal === principal)
      .sort((a, b) => a.lastSeen - b.lastSeen);
    for (const s of mine.slice(0, Math.max(0, mine.length - PER_PRINCIPAL))) this.drop(s.id);
  }

  /** Close every session (the node is stopping): their event streams end and their wake-up registrations go. */
  close(): void {
    for (const id of [...this.sessions.keys()]) this.drop(id);
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const cutoff = this.svc.now() - IDLE_MS;
      for (const s of [...this.sessions.values()]) if (s.lastSeen < cutoff) this.drop(s.id);
    }, 60_000);
    this.sweeper.unref();
  }
}
