import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFetch } from '../api-fetch.js';
import { Exit } from '../cli-error.js';
import { apiBase, badArgument, lazyHome, resolveSigner, type AdminOptions } from './admin.js';
import { reportSuccess } from './json-output.js';

/** Options of `ledger dashboard`. */
export interface DashboardOptions extends AdminOptions {
  /** Loopback port to serve on (0: any free port). */
  readonly port?: number;
}

/**
 * The operator pages a browser may open through the proxy: they only read.
 * Everything else (statements, the approval page, the API's JSON routes) is
 * answered 404 here, so the proxy never turns a local key into an open API.
 */
const PAGES: ReadonlySet<string> = new Set(['/', '/dashboard', '/dashboard.css', '/metrics']);

/**
 * `ledger dashboard`: the API's reads need a signature (an admin's or an
 * auditor's for the dashboard), which a browser cannot make from a key file.
 * This serves the operator pages on 127.0.0.1 and signs each GET with the
 * local key (`--as` / `--signer-key`, default the first admin key), so an
 * operator opens the printed URL in a browser on the same machine. Only GETs
 * of the pages above pass; anyone who can reach the loopback port reads them
 * as that key's principal, which is why it never binds another address.
 */
export async function dashboardCommand(options: DashboardOptions): Promise<number> {
  const home = lazyHome(options.home);
  const signer = resolveSigner(options, home);
  const base = apiBase(options, home);
  const read = readFetch(signer);
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw badArgument(`--port takes 0-65535, not ${String(options.port)}`);

  const serve = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || !PAGES.has(url.pathname)) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not served by ledger dashboard: only GET /, /dashboard, /dashboard.css and /metrics\n');
      return;
    }
    try {
      const answer = await read(`${base}${url.pathname}${url.search}`);
      const headers: Record<string, string> = { 'cache-control': 'no-store' };
      const type = answer.headers.get('content-type');
      if (type !== null) headers['content-type'] = type;
      response.writeHead(answer.status, headers).end(Buffer.from(await answer.arrayBuffer()));
    } catch (err) {
      response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`the ledger API at ${base} did not answer: ${(err as Error).message}\n`);
    }
  };
  const server = createServer((request, response) => {
    serve(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  const url = `http://127.0.0.1:${bound}/dashboard`;
  reportSuccess(options.json, [`dashboard of ${base}, read as ${signer.principal}: open ${url} (Ctrl-C to stop)`], { url, signer: signer.principal, api: base });
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      server.close(() => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return Exit.ok;
}
