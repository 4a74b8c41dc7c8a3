import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Hash } from '@agent-ledger/core';
import type { SqlPool } from '@agent-ledger/store';
import type { LogIndex } from './log-index.js';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { badArgument, errorBody, notFound } from './errors.js';
import { forbidden, hiddenOrMissing, holdsRole, type Reader } from './read-auth.js';

/** What the approval routes need from the API process. */
export interface ApprovalRouteDeps {
  readonly pool: SqlPool;
  readonly logIndex: LogIndex;
  /** The authenticated reader of a request. */
  readonly readerOf: (req: FastifyRequest) => Reader;
  /** True when the reader may read about the proposal (its agent, an approver whose queue holds it or who answered it, an admin). */
  readonly mayReadProposal: (reader: Reader, proposal: string, agentId: string | undefined) => Promise<boolean>;
}

/**
 * Content-Security-Policy of the approval page: scripts, styles and requests
 * from this origin only, no inline script, no framing, no form posts, no
 * plugins. The page holds an approver's private key in memory, so nothing
 * from elsewhere may run beside it.
 */
export const APPROVAL_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': APPROVAL_PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
};

interface StaticFile {
  readonly type: string;
  readonly bytes: Buffer;
}

/**
 * The fixed allow-list of static files the page may load, read once at
 * start: the page, its script and style (services/ledger/src/api/web/), and
 * the ESM files of @noble/ed25519 and @noble/hashes' SHA-2 from
 * node_modules. No other path under /approve/ is served, and nothing comes
 * from a CDN.
 */
function staticFiles(): Map<string, StaticFile> {
  // dist/src/api/approval-page.js -> services/ledger/src/api/web/
  const web = fileURLToPath(new URL('../../../src/api/web/', import.meta.url));
  const ed25519 = fileURLToPath(import.meta.resolve('@noble/ed25519'));
  const hashes = dirname(fileURLToPath(import.meta.resolve('@noble/hashes/sha2.js')));
  const js = 'text/javascript; charset=utf-8';
  const files: [string, string, string][] = [
    ['/approve', join(web, 'approve.html'), 'text/html; charset=utf-8'],
    ['/approve/app.js', join(web, 'approve.js'), js],
    ['/approve/app.css', join(web, 'approve.css'), 'text/css; charset=utf-8'],
    ['/approve/vendor/noble-ed25519.js', ed25519, js],
    // sha2.js and the three modules it imports (relative imports resolve under the same directory).
    ['/approve/vendor/noble-hashes/sha2.js', join(hashes, 'sha2.js'), js],
    ['/approve/vendor/noble-hashes/_md.js', join(hashes, '_md.js'), js],
    ['/approve/vendor/noble-hashes/_u64.js', join(hashes, '_u64.js'), js],
    ['/approve/vendor/noble-hashes/utils.js', join(hashes, 'utils.js'), js],
  ];
  return new Map(files.map(([route, path, type]) => [route, { type, bytes: readFileSync(path) }]));
}

interface ProposalLocation {
  readonly partition: number;
  readonly index: number;
  readonly tier: number | null;
  readonly risk: number | null;
  readonly status: string;
}

interface RequestLocation {
  readonly partition: number;
  readonly index: number;
}

async function entryWhenIndexed(logIndex: LogIndex, partition: number, index: number): Promise<unknown> {
  // The projection can run a moment ahead of this process's log index.
  let text = await logIndex.entryText(partition, index);
  for (let tries = 0; text === undefined && tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    text = await logIndex.entryText(partition, index);
  }
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/**
 * Registers the approver's routes on the API:
 *
 * - `GET /v1/proposals/:hash`: the signed `proposal.submitted` entry as the
 *   log holds it, and the newest `confirmation.requested` entry about it, so
 *   an approver checks (hash and signature) exactly what the agent signed
 *   before answering. Read-only.
 * - `GET /approve`: the web approval page (strict CSP), and its fixed
 *   allow-list of static files.
 */
export function registerApprovalRoutes(app: FastifyInstance, deps: ApprovalRouteDeps): void {
  registerPendingStream(app, deps.pool, deps.readerOf);
  const files = staticFiles();
  for (const [route, file] of files) {
    app.get(route, async (_req, reply) => reply.headers(SECURITY_HEADERS).type(file.type).send(file.bytes));
  }

  app.get<{ Params: { hash: string } }>('/v1/proposals/:hash', async (req, reply) => {
    const proposalHash = req.params.hash; // untrusted
    if (!Hash.safeParse(proposalHash).success) throw badArgument('proposal must be a 64-hex statement hash');
    const found = await deps.pool.query(
      `SELECT partition, index, tier, risk, status, agent_id FROM proposals WHERE proposal_hash = $1`,
      [proposalHash],
    );
    const row = found.rows[0] as Record<string, unknown> | undefined;
    // Asked whether or not the proposal exists (the same work either way); one answer for unknown and not the reader's.
    const readable = await deps.mayReadProposal(deps.readerOf(req), proposalHash, row === undefined ? undefined : String(row['agent_id']));
    if (row === undefined || !readable) {
      return reply.code(404).send(errorBody(hiddenOrMissing('no such proposal on the log for this reader', true)));
    }
    const proposal: ProposalLocation = {
      partition: Number(row['partition']),
      index: Number(row['index']),
      tier: row['tier'] === null ? null : Number(row['tier']),
      risk: row['risk'] === null ? null : Number(row['risk']),
      status: String(row['status']),
    };
    const requests = await deps.pool.query(
      `SELECT partition, index FROM pending_approvals WHERE proposal_hash = $1 ORDER BY index DESC LIMIT 1`,
      [proposalHash],
    );
    const requestRow = requests.rows[0] as Record<string, unknown> | undefined;
    const request: RequestLocation | undefined = requestRow === undefined ? undefined : { partition: Number(requestRow['partition']), index: Number(requestRow['index']) };
    const entry = await entryWhenIndexed(deps.logIndex, proposal.partition, proposal.index);
    if (entry === null) {
      return reply.code(404).send(errorBody(notFound('the proposal entry is not indexed yet', true)));
    }
    return {
      proposalHash,
      tier: proposal.tier,
      risk: proposal.risk,
      status: proposal.status,
      entry,
      request: request === undefined ? null : await entryWhenIndexed(deps.logIndex, request.partition, request.index),
    };
  });
}

/** How often the queue is looked at for the live stream, and how often an idle stream says it is alive. */
const STREAM_POLL_MS = 1000;
const STREAM_KEEPALIVE_MS = 15_000;
/** Open live streams at most: each holds a socket. */
const MAX_STREAMS = 256;

/**
 * `GET /v1/pending/stream`: server-sent events (text/event-stream) for the
 * approval page. An `event: pending` with `{count}` is sent at once and
 * whenever the open queue changes (a request added, answered, approved by
 * one more approver, or timed out). One poller serves every open stream: one
 * query a second while any page is open, none otherwise.
 */
function registerPendingStream(app: FastifyInstance, pool: SqlPool, readerOf: (req: FastifyRequest) => Reader): void {
  const streams = new Set<(event: string) => void>();
  let last = '';
  let poller: NodeJS.Timeout | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  let polling = false;
  const snapshot = async (): Promise<{ key: string; count: number }> => {
    const result = await pool.query(`SELECT request_hash, approved_by FROM pending_approvals WHERE status = 'pending' AND deadline > now() ORDER BY request_hash`);
    return { key: JSON.stringify(result.rows), count: result.rowCount ?? 0 };
  };
  const poll = async (): Promise<void> => {
    if (polling) return;
    polling = true;
    try {
      const now = await snapshot();
      if (now.key !== last) {
        last = now.key;
        const event = `event: pending\ndata: ${JSON.stringify({ count: now.count })}\n\n`;
        for (const send of streams) send(event);
      }
    } catch {
      // Postgres unavailable: the streams stay open and catch up when it answers.
    } finally {
      polling = false;
    }
  };
  const stopTimers = (): void => {
    clearInterval(poller);
    clearInterval(keepalive);
    poller = undefined;
    keepalive = undefined;
  };
  app.addHook('onClose', async () => {
    stopTimers();
    for (const send of streams) send('');
  });
  app.get('/v1/pending/stream', async (req, reply) => {
    if (!holdsRole(readerOf(req), ['approver'])) throw forbidden('the pending queue is read by approvers and admins');
    if (streams.size >= MAX_STREAMS) return reply.code(503).send(errorBody(new OperationalError(OperationalCode.UNAVAILABLE, 'too many live streams open', { retryable: true })));
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', connection: 'keep-alive' });
    raw.write('retry: 2000\n\n');
    const send = (event: string): void => {
      if (event === '') raw.end();
      else raw.write(event);
    };
    streams.add(send);
    req.raw.once('close', () => {
      streams.delete(send);
      if (streams.size === 0) stopTimers();
    });
    // The first event at once, from a fresh look (not the shared last one).
    try {
      const now = await snapshot();
      raw.write(`event: pending\ndata: ${JSON.stringify({ count: now.count })}\n\n`);
    } catch {
      raw.write(`event: pending\ndata: {"count":null}\n\n`);
    }
    poller ??= setInterval(() => {
      poll().catch(() => undefined);
    }, STREAM_POLL_MS);
    keepalive ??= setInterval(() => {
      for (const s of streams) s(': keepalive\n\n');
    }, STREAM_KEEPALIVE_MS);
    return reply;
  });
}
