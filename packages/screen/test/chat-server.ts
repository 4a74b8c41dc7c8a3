import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request the server accepted, as it arrived. */
export interface ChatRequest {
  readonly model: string;
  readonly messages: ReadonlyArray<{ role: string; content: string }>;
  readonly temperature: number;
  readonly response_format: { type: string };
}

/** What the scripted model answers. */
export type Reply =
  | { readonly kind: 'completion'; readonly content: string | null }
  | { readonly kind: 'raw'; readonly status: number; readonly contentType: string; readonly body: string | Buffer; readonly chunked?: boolean }
  | { readonly kind: 'hang' }
  | { readonly kind: 'stall_body' };

/** A proper OpenAI `chat.completion` object carrying `content`. */
export function completion(model: string, content: string | null): object {
  return {
    id: 'chatcmpl-local-1',
    object: 'chat.completion',
    created: 1767225600,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

export interface ChatServer {
  readonly baseUrl: string;
  /** Requests that passed every check, in order. */
  readonly accepted: ChatRequest[];
  /** Why requests were refused with 400/401/404/405 (empty when the client spoke the API correctly). */
  readonly rejected: string[];
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function apiError(res: ServerResponse, status: number, message: string, rejected: string[]): void {
  rejected.push(message);
  sendJson(res, status, { error: { message, type: 'invalid_request_error', param: null, code: null } });
}

/** Checks a body the way an OpenAI-compatible server does; returns the problem or null. */
function requestProblem(value: unknown, model: string): string | null {
  if (typeof value !== 'object' || value === null) return 'body is not an object';
  const r = value as Record<string, unknown>;
  if (r['model'] !== model) return `unknown model ${String(r['model'])}`;
  const messages = r['messages'];
  if (!Array.isArray(messages) || messages.length !== 2) return 'messages must be [system, user]';
  const roles = messages.map((m: unknown) => (typeof m === 'object' && m !== null ? (m as Record<string, unknown>)['role'] : undefined));
  if (roles[0] !== 'system' || roles[1] !== 'user') return 'messages must be [system, user]';
  for (const m of messages as Array<Record<string, unknown>>) {
    if (typeof m['content'] !== 'string' || Object.keys(m).length !== 2) return 'each message is {role, content: string}';
  }
  if (r['temperature'] !== 0) return 'temperature must be 0';
  const format = r['response_format'] as Record<string, unknown> | undefined;
  if (format?.['type'] !== 'json_object') return 'response_format must be json_object';
  return null;
}

/**
 * A local server speaking the OpenAI chat-completions API on 127.0.0.1 (port
 * 0): it checks method, path, Authorization, content type, model and the
 * messages' shape, then answers what `respond` scripts.
 */
export async function startChatServer(options: { model: string; apiKey?: string; respond: (request: ChatRequest) => Reply }): Promise<ChatServer> {
  const accepted: ChatRequest[] = [];
  const rejected: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url !== '/v1/chat/completions') return apiError(res, 404, `no route ${String(req.url)}`, rejected);
      if (req.method !== 'POST') return apiError(res, 405, `method ${String(req.method)}`, rejected);
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return apiError(res, 401, 'invalid api key', rejected);
      }
      if (options.apiKey === undefined && req.headers.authorization !== undefined) return apiError(res, 400, 'unexpected authorization', rejected);
      if (!/^application\/json/.test(req.headers['content-type'] ?? '')) return apiError(res, 400, 'content-type must be application/json', rejected);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return apiError(res, 400, 'body is not JSON', rejected);
      }
      const problem = requestProblem(body, options.model);
      if (problem !== null) return apiError(res, 400, problem, rejected);
      const request = body as ChatRequest;
      accepted.push(request);
      const reply = options.respond(request);
      switch (reply.kind) {
        case 'completion':
          return sendJson(res, 200, completion(options.model, reply.content));
        case 'raw': {
          const headers: Record<string, string | number> = { 'content-type': reply.contentType };
          if (reply.chunked !== true) headers['content-length'] = Buffer.byteLength(reply.body);
          res.writeHead(reply.status, headers);
          if (reply.chunked === true) {
            const buf = Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(reply.body);
            for (let at = 0; at < buf.length; at += 65536) res.write(buf.subarray(at, at + 65536));
            res.end();
          } else {
            res.end(reply.body);
          }
          return undefined;
        }
        case 'hang':
          return undefined; // never answers; the client's deadline must end it
        case 'stall_body':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
          res.write('{"id":"chatcmpl-local-1","choices":[');
          return undefined; // headers and a partial body, then silence
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    accepted,
    rejected,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
