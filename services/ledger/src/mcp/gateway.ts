import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ListToolsRequestSchema, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { judgeToolCall, Permission, type Verdict } from '../hook/executor.js';
import { FailMode, Interceptor, type ToolCall, type ToolHints } from '../hook/tool-call.js';
import type { LedgerClient } from '@agent-ledger/client';

/** The `_meta` key under which a refused call's result carries the ledger's answer. */
export const LEDGER_META_KEY = 'agent-ledger/decision';

/** Options of {@link McpGateway}. */
export interface GatewayOptions {
  /** The agent's SDK client (agent key, pinned trust document: receipts are verified against it). */
  readonly client: LedgerClient;
  /** Ledger unreachable: `closed` refuses the call, `open` forwards it (`ask` is `closed`: MCP has no user to hand it to). */
  readonly failMode: FailMode;
  /** How long one call may wait for its decision (a `verify_first` waits for the human), in ms. */
  readonly budgetMs: number;
  /** The server's name in tool names (`mcp__<server>__<tool>`); default: the name the server gives itself. */
  readonly serverName?: string;
  /** Called after each judged call (a fail-open call is spooled here). */
  readonly onVerdict?: (call: ToolCall, verdict: Verdict) => void;
}

/** What the server the gateway stands in front of is started with. */
export interface DownstreamCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
}

/** A server name as it appears in `mcp__<server>__<tool>`: words joined by `-`. */
function serverSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64) || 'server';
}

function hintsOf(tool: Tool | undefined): ToolHints | undefined {
  const a = tool?.annotations;
  if (a === undefined) return undefined;
  const hints: { -readonly [K in keyof ToolHints]: ToolHints[K] } = {};
  if (typeof a.title === 'string') hints.title = a.title;
  if (typeof a.readOnlyHint === 'boolean') hints.readOnlyHint = a.readOnlyHint;
  if (typeof a.destructiveHint === 'boolean') hints.destructiveHint = a.destructiveHint;
  if (typeof a.idempotentHint === 'boolean') hints.idempotentHint = a.idempotentHint;
  if (typeof a.openWorldHint === 'boolean') hints.openWorldHint = a.openWorldHint;
  return hints;
}

/**
 * An MCP gateway: an MCP server in front of a real one (the downstream,
 * started as a child process over stdio). `tools/list` passes through, and the
 * gateway keeps each tool's annotations (`readOnlyHint`, `destructiveHint`,
 * ...) to record them in the proposals. Every `tools/call` becomes a signed
 * proposal of the agent: an allow, once its decision and receipt verify, is
 * forwarded; a block or deny comes back as an MCP tool error (`isError`)
 * carrying the refusal and the decision's log position (in the text and in
 * `_meta["agent-ledger/decision"]`); a `verify_first` waits for the human
 * within the budget, and silence is a denial. Only tools are served: the
 * downstream's resources and prompts are not reachable through the gateway,
 * so nothing goes around the ledger.
 */
export class McpGateway {
  readonly #options: GatewayOptions;
  readonly #downstream: Client;
  readonly #servers = new Set<Server>();
  #tools = new Map<string, Tool>();
  #serverName = 'server';

  private constructor(options: GatewayOptions, downstream: Client) {
    this.#options = options;
    this.#downstream = downstream;
  }

  /** Starts the downstream server and connects to it. */
  static async start(command: DownstreamCommand, options: GatewayOptions): Promise<McpGateway> {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    const transport = new StdioClientTransport({ command: command.command, args: [...command.args], env, stderr: 'inherit', ...(command.cwd === undefined ? {} : { cwd: command.cwd }) });
    return McpGateway.connect(transport, options);
  }

  /** Connects to a downstream server over any MCP client transport. */
  static async connect(transport: Transport, options: GatewayOptions): Promise<McpGateway> {
    const downstream = new Client({ name: 'agent-ledger-gateway', version: '0.1.0' });
    const gateway = new McpGateway(options, downstream);
    await downstream.connect(transport);
    gateway.#serverName = serverSlug(options.serverName ?? downstream.getServerVersion()?.name ?? 'server');
    downstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await gateway.#refreshTools();
      for (const server of gateway.#servers) await server.sendToolListChanged().catch(() => undefined);
    });
    await gateway.#refreshTools();
    return gateway;
  }

  /** The server name used in tool names. */
  get serverName(): string {
    return this.#serverName;
  }

  async #refreshTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#downstream.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    return tools;
  }

  /**
   * A new MCP server for one upstream session (stdio: the one; HTTP: one per
   * session), answering from this gateway.
   */
  createServer(): Server {
    const server = new Server({ name: `agent-ledger-gateway/${this.#serverName}`, version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await this.#refreshTools() }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => this.callTool(request.params.name, request.params.arguments ?? {}, String(extra.requestId), extra.sessionId));
    this.#servers.add(server);
    server.onclose = () => this.#servers.delete(server);
    return server;
  }

  /** Judges one call and forwards it when allowed. */
  async callTool(name: string, args: Record<string, unknown>, callId?: string, session?: string): Promise<CallToolResult> {
    if (!this.#tools.has(name)) await this.#refreshTools();
    const hints = hintsOf(this.#tools.get(name));
    const call: ToolCall = {
      tool: `mcp__${this.#serverName}__${name}`,
      input: args,
      interceptor: Interceptor.mcpGateway,
      server: this.#serverName,
      ...(hints === undefined ? {} : { hints }),
      ...(callId === undefined ? {} : { callId }),
      ...(session === undefined ? {} : { session }),
    };
    const failMode = this.#options.failMode === FailMode.open ? FailMode.open : FailMode.closed;
    const verdict = await judgeToolCall(call, { client: this.#options.client, failMode, budgetMs: this.#options.budgetMs });
    this.#options.onVerdict?.(call, verdict);
    if (verdict.permission !== Permission.allow) {
      return {
        content: [{ type: 'text', text: verdict.reason }],
        isError: true,
        _meta: { [LEDGER_META_KEY]: { permission: verdict.permission, code: verdict.code, reason: verdict.reason, proposal: verdict.proposal, decision: verdict.decision } },
      };
    }
    return (await this.#downstream.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** Closes every upstream session and the downstream server. */
  async close(): Promise<void> {
    for (const server of [...this.#servers]) await server.close().catch(() => undefined);
    await this.#downstream.close();
  }
}
