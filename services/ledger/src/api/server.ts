import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type pg from 'pg';
import { Registry, Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  EnvelopeSchema,
  Hash,
  canonicalJson,
  nodeEd25519,
  parseStrictJsonBytes,
  partitionOf,
  statementHash,
  verifyEnvelopeSignatures,
  type Envelope,
} from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';
import {
  DECISION_CHANNEL,
  MAX_QUERY_LIMIT,
  decisionFor,
  decisionTrail,
  enforcementRecords,
  grantTrail,
  listGrants,
  listPending,
  refusalMetrics,
} from '@agent-ledger/store';
import type { AuthorityFollower } from '../authority-follower.js';
import type { TopicNames } from '../topics.js';
import type { LogIndex } from './log-index.js';
import { errorBody, statusOf } from './errors.js';
import { openApiDocument } from './openapi.js';
import { registerApprovalRoutes } from './approval-page.js';

/** What the API needs from the rest of the process. */
export interface ApiDeps {
  readonly bus: LogBus;
  readonly pool: pg.Pool;
  readonly follower: AuthorityFollower;
  readonly logIndex: LogIndex;
  readonly eventPartitions: number;
  readonly origin: string;
  readonly topics: TopicNames;
  /** Extra health checks (e.g. projector halted partitions). */
  readonly health: () => Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  readonly registry?: Registry;
  /** The installation's trust-root keys, reported by /readyz so a client can tell which installation answers. */
  readonly rootKeys?: readonly string[];
  /** Extra /readyz detail (e.g. the gate's overdue proposals). */
  readonly readyDetail?: () => Record<string, unknown>;
}

const BODY_LIMIT = 256 * 1024;
const MAX_WAIT_MS = 60_000;
/** A grant id is up to 256 characters (`grant.proposed`); percent-encoded in a path it may take 12 bytes each. */
const MAX_PARAM_LENGTH = 256 * 12;
/** Decisions a grant trail lists by default (all are counted). */
const TRAIL_DECISIONS = 1000;

/**
 * The HTTP API (fastify). Every body goes through the core's strict parser
 * and zod before anything else; every refusal is a 4xx carrying a
 * ReasonCode. Accepted statements are published to intake, where the
 * sequencer chains them (or records their rejection).
 */
export async function buildApi(deps: ApiDeps): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const registry = deps.registry ?? new Registry();
  if (deps.registry === undefined) collectDefaultMetrics({ register: registry });
  const submitted = new Counter({ name: 'ledger_api_statements_total', help: 'Statements accepted for intake, by type', labelNames: ['type'], registers: [registry] });
  const refused = new Counter({ name: 'ledger_api_refusals_total', help: 'Requests refused, by reason code', labelNames: ['code'], registers: [registry] });
  const waitSeconds = new Histogram({ name: 'ledger_api_decision_wait_seconds', help: 'Time a long-poll waited for its decision', buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] });
  new Gauge({ name: 'ledger_authority_index', help: 'Authority entries folded by this process', registers: [registry], collect() { this.set(deps.follower.current().size); } });

  const app = Fastify({ bodyLimit: BODY_LIMIT, logger: false, routerOptions: { maxParamLength: MAX_PARAM_LENGTH } });
  // Raw bytes in, so the strict parser (not fastify's JSON.parse) sees every body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', (_req, _payload, done) => done(new LedgerError(ReasonCode.SCHEMA_INVALID, 'content type must be application/json'), undefined));

  const fail = (reply: FastifyReply, err: LedgerError): FastifyReply => {
    refused.inc({ code: err.code });
    return reply.code(statusOf(err)).send(errorBody(err));
  };
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof LedgerError) return fail(reply, err);
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 413) return fail(reply, new LedgerError(ReasonCode.SCHEMA_INVALID, 'body too large'));
    if (status === 415 || (status !== undefined && status >= 400 && status < 500)) {
      return fail(reply, new LedgerError(ReasonCode.SCHEMA_INVALID, (err as Error).message));
    }
    return fail(reply, new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'internal error', { retryable: true, cause: err }));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: { code: 'SCHEMA_INVALID', message: 'no such route', retryable: false } }));

  // Decision long-poll: one LISTEN connection wakes every waiter of a proposal.
  const waiters = new Map<string, Set<() => void>>();
  const listener = await deps.pool.connect();
  await listener.query(`LISTEN ${DECISION_CHANNEL}`);
  listener.on('notification', (msg) => {
    const set = msg.payload === undefined ? undefined : waiters.get(msg.payload);
    if (set !== undefined) for (const wake of set) wake();
  });

  app.post('/v1/statements', async (req, reply) => {
    if (!Buffer.isBuffer(req.body)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'content type must be application/json');
    const value = parseStrictJsonBytes(req.body, { maxBytes: BODY_LIMIT, maxDepth: 32 });
    const parsed = EnvelopeSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid envelope'}`);
    }
    const envelope = parsed.data as unknown as Envelope;
    const statement = envelope.statement;
    if (statement.type === 'intake.rejected' || statement.type === 'genesis') {
      throw new LedgerError(ReasonCode.POLICY_VIOLATION, `${statement.type} cannot be submitted`);
    }
    const signers = verifyEnvelopeSignatures(envelope, canonicalJson(statement), nodeEd25519);
    const { state, size } = deps.follower.current();
    state.authorize(statement, signers, size);
    // Registry and grant rules (four eyes, lifetimes, delegation...): refused here with the code the sequencer would record.
    state.check(statement, Date.now());
    const partition = partitionOf(statement, deps.eventPartitions);
    await deps.bus.publish([{ topic: deps.topics.intake, partition, key: (statement.body as { agentId?: string }).agentId ?? null, value: JSON.stringify(envelope) }]);
    submitted.inc({ type: statement.type });
    return reply.code(202).send({ id: statement.id, statementHash: statementHash(statement), partition });
  });

  app.get<{ Params: { proposal: string }; Querystring: { waitMs?: string } }>('/v1/decisions/:proposal', async (req, reply) => {
    const proposal = req.params.proposal;
    if (!Hash.safeParse(proposal).success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'proposal must be a 64-hex statement hash');
    const waitMs = Math.min(parseWholeNumber(req.query.waitMs ?? '0', 'waitMs'), MAX_WAIT_MS);
    const started = Date.now();
    let decision = await decisionFor(deps.pool, proposal);
    if (decision === null && waitMs > 0) {
      decision = await new Promise((resolve) => {
        let done = false;
        const set = waiters.get(proposal) ?? new Set<() => void>();
        waiters.set(proposal, set);
        const finish = (value: Awaited<ReturnType<typeof decisionFor>>): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          set.delete(wake);
          if (set.size === 0) waiters.delete(proposal);
          resolve(value);
        };
        const wake = (): void => {
          void decisionFor(deps.pool, proposal).then((d) => { if (d !== null) finish(d); }, () => undefined);
        };
        const timer = setTimeout(() => finish(null), waitMs);
        set.add(wake);
        // A decision committed between the first read and LISTEN registration is caught here.
        wake();
      });
      waitSeconds.observe((Date.now() - started) / 1000);
    }
    if (decision === null) return reply.code(202).send({ proposal, decision: null });
    // The signed entry itself, so the client verifies the decision rather than trusting this server.
    let text = deps.logIndex.entryText(decision.partition, decision.index);
    for (let tries = 0; text === undefined && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = deps.logIndex.entryText(decision.partition, decision.index);
    }
    if (text === undefined) return reply.code(202).send({ proposal, decision: null });
    return reply.send({ proposal, decision, entry: JSON.parse(text) as unknown });
  });

  // Paper trails. An unknown grant or decision is GRANT_MISSING (404), retryable: the projection may not have it yet.
  app.get<{ Params: { grantId: string }; Querystring: { limit?: string } }>('/v1/grants/:grantId/trail', async (req) => {
    const grantId = checkGrantId(req.params.grantId);
    const decisionLimit = Math.min(parseWholeNumber(req.query.limit ?? String(TRAIL_DECISIONS), 'limit'), MAX_QUERY_LIMIT);
    const trail = await grantTrail(deps.pool, grantId, { decisionLimit });
    if (trail === null) throw new LedgerError(ReasonCode.GRANT_MISSING, `no grant ${grantId} in the projection`, { retryable: true });
    return trail;
  });
  app.get<{ Params: { proposal: string } }>('/v1/decisions/:proposal/trail', async (req) => {
    const proposal = req.params.proposal;
    if (!Hash.safeParse(proposal).success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'proposal must be a 64-hex statement hash');
    const trail = await decisionTrail(deps.pool, proposal);
    if (trail === null) throw new LedgerError(ReasonCode.GRANT_MISSING, `no final decision about proposal ${proposal} in the projection`, { retryable: true });
    return { proposal, ...trail };
  });
  app.get<{ Querystring: { limit?: string } }>('/v1/pending', async (req) => ({ pending: await listPending(deps.pool, { limit: Math.min(parseWholeNumber(req.query.limit ?? '100', 'limit'), 1000) }) }));
  app.get<{ Querystring: { agentId?: string } }>('/v1/grants', async (req) => ({ grants: await listGrants(deps.pool, req.query.agentId === undefined ? {} : { agentId: req.query.agentId }) }));
  app.get('/v1/refusals/metrics', async () => ({ metrics: await refusalMetrics(deps.pool, {}) }));
  app.get<{ Querystring: { agentId?: string; limit?: string } }>('/v1/enforcement', async (req) => ({
    records: await enforcementRecords(deps.pool, { ...(req.query.agentId === undefined ? {} : { agentId: req.query.agentId }), limit: Math.min(parseWholeNumber(req.query.limit ?? '100', 'limit'), 1000) }),
  }));
  app.get<{ Querystring: { partition?: string } }>('/v1/checkpoints/latest', async (req, reply) => {
    const partition = parseWholeNumber(req.query.partition ?? '0', 'partition');
    const latest = deps.logIndex.latestCheckpoint(partition);
    if (latest === undefined) return reply.code(404).send({ error: { code: 'SCHEMA_INVALID', message: `no checkpoint yet for partition ${partition}`, retryable: true } });
    return { partition, size: latest.size, note: latest.note };
  });
  app.get<{ Params: { partition: string; index: string } }>('/v1/receipts/:partition/:index', async (req, reply) => {
    const receipt = deps.logIndex.receipt(parseWholeNumber(req.params.partition, 'partition'), parseWholeNumber(req.params.index, 'index'));
    if (receipt === undefined) return reply.code(404).send({ error: { code: 'SCHEMA_INVALID', message: 'no checkpointed entry at that position yet', retryable: true } });
    return receipt;
  });
  app.get<{ Querystring: { partition?: string; from?: string; to?: string } }>('/v1/consistency', async (req) => {
    const partition = parseWholeNumber(req.query.partition ?? '0', 'partition');
    return deps.logIndex.consistency(partition, parseWholeNumber(req.query.from ?? '0', 'from'), req.query.to === undefined ? undefined : parseWholeNumber(req.query.to, 'to'));
  });
  app.get('/metrics', async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  app.get('/healthz', async (_req, reply) => {
    const health = await deps.health();
    return reply.code(health.ok ? 200 : 503).send(health);
  });
  app.get('/readyz', async (_req, reply) => {
    try {
      deps.follower.current();
      await deps.pool.query('SELECT 1');
      return reply.send({ ready: true, origin: deps.origin, rootKeys: deps.rootKeys ?? [], ...deps.readyDetail?.() });
    } catch (err) {
      return reply.code(503).send({ ready: false, error: (err as Error).message });
    }
  });
  app.get('/openapi.json', async () => openApiDocument());
  registerApprovalRoutes(app, { pool: deps.pool, logIndex: deps.logIndex });

  return {
    app,
    close: async () => {
      await app.close();
      listener.release();
    },
  };
}

/** A grant id from a path (untrusted): what `grant.proposed` allows, 1 to 256 characters. */
function checkGrantId(text: string): string {
  if (text.length < 1 || text.length > 256) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a grant id is 1 to 256 characters');
  return text;
}

function parseWholeNumber(text: string, name: string): number {
  if (!/^\d{1,12}$/.test(text)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${name} must be a whole number`);
  return Number(text);
}
