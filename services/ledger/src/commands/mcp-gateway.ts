import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetchTrust, pinTrust } from '@agent-ledger/client';
import { Principal } from '@agent-ledger/core';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Exit } from '../cli-error.js';
import { ExecutorConfigSchema, executorClient, readExecutorConfig, type ExecutorConfig } from '../hook/config.js';
import { flushSpool, spoolFailOpen } from '../hook/spool.js';
import { FailMode } from '../hook/tool-call.js';
import { LedgerHome, apiCaFile } from '../home.js';
import { McpGateway } from '../mcp/gateway.js';
import { serveGatewayHttp } from '../mcp/http.js';
import { checkApiUrl } from './http.js';
import { apiFetch } from '../api-fetch.js';

/** Options of `ledger mcp-gateway`. */
export interface McpGatewayOptions {
  /** An executor configuration file (as `ledger setup claude-code` writes). */
  readonly config?: string;
  /** Or: the installation, and the agent whose key in its `keys/` signs. */
  readonly home?: string;
  readonly agent?: string;
  readonly api?: string;
  readonly failMode?: string;
  /** Seconds one call may wait for its decision. */
  readonly budget?: number;
  /** The server's name in tool names (default: the name it gives itself). */
  readonly name?: string;
  /** Serve MCP over Streamable HTTP on this port instead of stdio. */
  readonly http?: number;
  readonly host?: string;
}

async function configOf(options: McpGatewayOptions): Promise<ExecutorConfig & { spool: string }> {
  if (options.config !== undefined) return { ...readExecutorConfig(options.config), spool: `${options.config}.spool.ndjson` };
  if (options.agent === undefined) throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'give --config FILE, or --agent PRINCIPAL (its key in the installation\'s keys/)');
  if (!Principal.safeParse(options.agent).success) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `--agent takes kind:name such as agent:build-bot, not ${options.agent}`);
  const home = LedgerHome.open(options.home);
  const api = checkApiUrl(options.api ?? home.apiUrl());
  // Pinned once per installation: fetched against the trust root the installation holds, then only refreshed forward.
  const trust = join(home.dir, 'trust.json');
  if (!existsSync(trust)) pinTrust(trust, await fetchTrust(api, { trustRoot: home.trustRoot, fetch: apiFetch(apiCaFile(home.config)) }));
  const parsed = ExecutorConfigSchema.safeParse({
    v: 1,
    api,
    keyFile: join(home.dir, 'keys', `${options.agent.replace(':', '-')}.key`),
    trust,
    failMode: options.failMode ?? FailMode.closed,
    budgetMs: (options.budget ?? 110) * 1000,
  });
  if (!parsed.success) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return { ...parsed.data, spool: join(home.dir, `mcp-gateway-${options.agent.replace(':', '-')}.spool.ndjson`) };
}

/**
 * `ledger mcp-gateway [--config FILE | --agent P] [--http PORT] -- COMMAND ARGS...`:
 * starts the MCP server COMMAND as a child and stands in front of it, over
 * stdio (the default: an MCP client launches the gateway as its server) or
 * Streamable HTTP. Every tool call is proposed, signed with the agent's key,
 * and forwarded only on a verified allow (see {@link McpGateway}). Logs go to
 * stderr: on stdio, stdout is the protocol.
 */
export async function mcpGatewayCommand(command: readonly string[], options: McpGatewayOptions): Promise<number> {
  const [program, ...args] = command;
  if (program === undefined) throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'give the MCP server to start after --, e.g. -- npx @modelcontextprotocol/server-filesystem /srv/project');
  // MCP has no user to hand a call to: `ask` is not a gateway mode (a configuration file's `ask` counts as closed).
  if (options.failMode !== undefined && options.failMode !== FailMode.closed && options.failMode !== FailMode.open) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `--fail-mode takes closed or open, not ${options.failMode}`);
  const config = await configOf(options);
  const failMode = options.failMode === undefined ? config.failMode : (options.failMode as FailMode);
  const client = executorClient(config);
  const log = (line: string): void => {
    process.stderr.write(`ledger mcp-gateway: ${line}\n`);
  };
  const gateway = await McpGateway.start({ command: program, args }, {
    client,
    failMode,
    budgetMs: options.budget === undefined ? config.budgetMs : options.budget * 1000,
    ...(options.name === undefined ? {} : { serverName: options.name }),
    onVerdict: (call, verdict) => {
      if (verdict.failedOpen) spoolFailOpen(config.spool, call, failMode, verdict.reason);
      else if (verdict.proposal !== null) void flushSpool(config.spool, client).catch(() => undefined);
      log(`${call.tool}: ${verdict.permission}: ${verdict.reason}`);
    },
  });
  let stop: () => Promise<void>;
  if (options.http !== undefined) {
    const http = await serveGatewayHttp(gateway, options.host ?? '127.0.0.1', options.http);
    log(`serving ${gateway.serverName} on ${http.url}`);
    stop = async () => {
      await http.close();
      await gateway.close();
    };
  } else {
    const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
    const server = gateway.createServer();
    const transport = new StdioServerTransport();
    await server.connect(transport);
    log(`serving ${gateway.serverName} on stdio`);
    stop = () => gateway.close();
    // The client closed the gateway's stdin: it is done with the server.
    process.stdin.once('end', () => void stop().catch(() => undefined).finally(() => process.exit(Exit.ok)));
  }
  await new Promise<void>((resolve) => {
    const done = (): void => {
      void stop().catch(() => undefined).finally(resolve);
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  return Exit.ok;
}
