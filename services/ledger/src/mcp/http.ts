import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpGateway } from './gateway.js';

/** The path the gateway serves MCP's Streamable HTTP transport on. */
export const MCP_PATH = '/mcp';

function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Reads a JSON request body (untrusted), at most 4 MiB. */
async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4 << 20) throw new Error('request body larger than 4 MiB');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/** A running HTTP front of the gateway. */
export interface GatewayHttp {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the gateway over MCP's Streamable HTTP transport (stateful: one
 * MCP session, and one gateway server, per `mcp-session-id`) on
 * `http://HOST:PORT/mcp`. Host headers other than the bound address are
 * refused (DNS rebinding protection); bind to loopback unless a proxy with
 * authentication stands in front.
 */
export async function serveGatewayHttp(gateway: McpGateway, host: string, port: number): Promise<GatewayHttp> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      if (new URL(req.url ?? '/', 'http://gateway').pathname !== MCP_PATH) return jsonRpcError(res, 404, `not found: MCP is served on ${MCP_PATH}`);
      const sessionId = req.headers['mcp-session-id'];
      const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (existing !== undefined) {
        const body = req.method === 'POST' ? await readBody(req) : undefined;
        return existing.handleRequest(req, res, body);
      }
      if (req.method !== 'POST') return jsonRpcError(res, 400, 'no valid MCP session id');
      const body = await readBody(req);
      if (typeof sessionId === 'string' || !isInitializeRequest(body)) return jsonRpcError(res, 400, 'no valid MCP session id (start with initialize)');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
        enableDnsRebindingProtection: true,
        allowedHosts,
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await gateway.createServer().connect(transport);
      return transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 400, (err as Error).message);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = [`${host}:${bound}`, `localhost:${bound}`, `127.0.0.1:${bound}`];
  return {
    url: `http://${host}:${bound}${MCP_PATH}`,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
