import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Registry, Counter, Gauge, Histogram } from 'prom-client';
import { LedgerError, OperationalCode, OperationalError, ReasonCode, isReasonCode } from '@agent-ledger/refusals';
import {
  EnvelopeSchema,
  Hash,
  MAX_PLATFORM_ASSURANCE_TIER,
  Principal,
  canonicalJson,
  eventPartitionOf,
  nodeEd25519,
  parseStrictJsonBytes,
  partitionOf,
  statementHash,
  verifyEnvelopeSignatures,
  type BodyOf,
  type Envelope,
} from '@agent-ledger/core';
import { remember } from '@agent-ledger/rulebook';
import type { LogBus } from '@agent-ledger/kafka';
import {
  MAX_QUERY_LIMIT,
  claimReadNonce,
  decisionFor,
  decisionTrail,
  enforcementRowOf,
  enforcementRecords,
  expireReadNonces,
  grantTrail,
  hasNotifications,
  listGrants,
  listPending,
  postgresError,
  refusalMetrics,
  type EnforcementRow,
  type SqlPool,
} from '@agent-ledger/store';

/** Final decisions the API keeps from the log for its long-polls (older ones come from the projection). */
const RECENT_DECISIONS = 65_536;
/** Confirmation requests the API keeps from the log, to judge an answer before the projection has its request. */
const RECENT_REQUESTS = 65_536;
/**
 * How long after its deadline (by this API's clock) an answer is still
 * passed on to the sequencer, which judges lateness by its own clock: the
 * clocks of two machines may differ by this much.
 */
const ANSWER_DEADLINE_GRACE_MS = 2_000;
import type { AuthorityFollower } from '../authority-follower.js';
import type { TopicNames } from '../topics.js';
import type { LogIndex } from './log-index.js';
import { badArgument, errorBody, notFound, statusOf, type ApiError } from './errors.js';
import { openApiDocument } from './openapi.js';
import { registerApprovalRoutes } from './approval-page.js';
import { registerTrustRoutes } from './trust-routes.js';
import { DecisionListener } from './decision-listener.js';
import { HostAllowList } from './host-allow-list.js';
import { RateLimiter, type RateSettings } from './rate-limit.js';
import { StatementTracker, sequencedStatus } from './statement-status.js';
import { REFUSED_DETAIL_HEADER, REFUSED_HEADER } from '../sequencer/partition-sequencer.js';
import { lineLogger, loggerFor } from '../logging.js';
import { OperatorMetrics, collectProcessMetrics } from './operator-metrics.js';
import { registerDashboardRoutes } from './web/dashboard.js';
import { ReadAuthenticator, forbidden, hiddenOrMissing, holdsRole, principalOf, readsEverything, type ReadAuthMode, type Reader } from './read-auth.js';

/** A confirmation request as far as judging an answer to it goes (from `pending_approvals`, or from the log). */
interface OpenRequest {
  readonly proposal: string;
  readonly agentId: string;
  readonly tier: number;
  readonly status: string;
  readonly deadlineMs: number;
}

/** What the API needs from the rest of the process. */
export interface ApiDeps {
  readonly bus: LogBus;
  readonly pool: SqlPool;
  /** The Postgres URL: the decision listener holds its own connection (an embedded database notifies in the process instead). */
  readonly pgUrl: string;
  readonly follower: AuthorityFollower;
  readonly logIndex: LogIndex;
  readonly eventPartitions: number;
  readonly origin: string;
  readonly topics: TopicNames;
  /** Extra health checks (e.g. projector halted partitions). */
  readonly health: () => Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** Dependencies the process watches (broker, Postgres): /readyz is 503 while one is down. */
  readonly dependencies?: () => Record<string, { up: boolean; error?: string }>;
  readonly registry?: Registry;
  /** The installation's trust-root keys, reported by /readyz so a client can tell which installation answers. */
  readonly rootKeys?: readonly string[];
  /** This installation's id, the statement hash of its genesis: every signed read names it (`aud`), served at `GET /v1/installation`. */
  readonly installation: string;
  /** Extra /readyz detail (e.g. the gate's overdue proposals). */
  readonly readyDetail?: () => Record<string, unknown>;
  /** Host names (with or without `:port`) the API answers besides the loopback forms of its own port. */
  readonly allowedHosts?: readonly string[];
  /** Statements one principal may submit: a token bucket. */
  readonly rateLimit?: RateSettings;
  /** Refusals of one principal recorded on the log: a token bucket (past it they are answered and counted only). */
  readonly refusalRecordLimit?: RateSettings;
  /** Longest wait of an accepted statement for the sequencer before new ones are refused with UNAVAILABLE (default: a third of the freshness window, at most 30 s). */
  readonly maxBacklogMs?: number;
  /** How reads are authenticated (default `signed`: each read signed by a registered key, answered within its role). */
  readonly readAuth?: ReadAuthMode;
  /** A bearer token `/metrics` also accepts (a Prometheus scraper holds no ledger key). */
  readonly metricsToken?: string;
  /** The API's certificate and private key (PEM): it then serves https only. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  readonly log?: (message: string) => void;
}

/**
 * Routes anyone who reaches the port may call: health, the trust document a
 * client bootstraps from, the API description, the landing page, the
 * approval page's static files, and statement submission (each statement
 * carries its own signatures). Every other route needs a signed read.
 */
function isPublicRoute(method: string, route: string): boolean {
  if (method === 'POST' && route === '/v1/statements') return true;
  return PUBLIC_GET.has(route) || route === '/approve' || route.startsWith('/approve/');
}
const PUBLIC_GET: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/v1/trust', '/v1/installation', '/openapi.json', '/', '/dashboard.css']);

const BODY_LIMIT = 256 * 1024;
const MAX_WAIT_MS = 60_000;
/** A grant id is up to 256 characters (`grant.proposed`); percent-encoded in a path it may take 12 bytes each. */
const MAX_PARAM_LENGTH = 256 * 12;
/** Longest query-string value the API reads. */
const MAX_QUERY_VALUE = 1024;
/** Decisions a grant trail lists by default (all are counted). */
const TRAIL_DECISIONS = 1000;
/** Default per-principal statement budget: bursts of 200, 100 a second sustained. */
export const DEFAULT_RATE_LIMIT: RateSettings = { burst: 200, perSecond: 100 };
/** Default per-principal budget of refusals written to the log: bursts of 20, one a second sustained. */
export const DEFAULT_REFUSAL_RECORD_LIMIT: RateSettings = { burst: 20, perSecond: 1 };
/** A statement id: UUIDv7 text. */
const STATEMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Characters no parameter may carry (NUL and other controls): refused before any query. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** fastify's own error codes and what the API answers for them. */
const FASTIFY_ERRORS: Readonly<Record<string, { status: number; error: () => ApiError }>> = {
  FST_ERR_BAD_URL: { status: 400, error: () => badArgument('the URL is not valid percent-encoded UTF-8') },
  FST_ERR_MAX_PARAM_LENGTH: { status: 400, error: () => badArgument('a path parameter is too long') },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, error: () => badArgument('the body is not JSON') },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, error: () => badArgument('the body is empty') },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 400, error: () => new LedgerError(ReasonCode.SCHEMA_INVALID, 'body too large') },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 400, error: () => new LedgerError(ReasonCode.SCHEMA_INVALID, 'content type must be application/json') },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, error: () => badArgument('the content length does not match the body') },
};

/**
 * The HTTP API. Statement submission checks bytes, JSON, schema and
 * signatures before anything else; every refusal is a 4xx carrying a
 * ReasonCode, every operational failure an OperationalCode
 * (`{error:{code,message,retryable}}` always). Accepted statements are
 * published to intake, where the sequencer chains them (or records their
 * rejection); refusals of signed statements are published too, marked, so
 * the sequencer records them as `intake.rejected`.
 */
export async function buildApi(deps: ApiDeps): Promise<{ app: FastifyInstance; close: () => Promise<void>; tracker: StatementTracker; tls: boolean }> {
  const registry = deps.registry ?? new Registry();
  if (deps.registry === undefined) collectProcessMetrics(registry);
  const requestLog = loggerFor('api');
  const log = deps.log ?? lineLogger(requestLog);
  const submitted = new Counter({ name: 'ledger_api_statements_total', help: 'Statements accepted for intake, by type', labelNames: ['type'], registers: [registry] });
  const refused = new Counter({ name: 'ledger_api_refusals_total', help: 'Requests refused, by reason code (refusals only)', labelNames: ['code'], registers: [registry] });
  const operational = new Counter({ name: 'ledger_api_operational_errors_total', help: 'Requests that failed for an operational reason (outage, bad argument, internal error), by operational code', labelNames: ['code'], registers: [registry] });
  const recorded = new Counter({ name: 'ledger_api_refusals_recorded_total', help: 'API refusals of signed statements published to intake to be recorded as intake.rejected', labelNames: ['code'], registers: [registry] });
  const unrecorded = new Counter({ name: 'ledger_api_refusals_unrecorded_total', help: 'API refusals not written to the log: the principal exceeded its refusal budget, or intake could not be reached', labelNames: ['reason'], registers: [registry] });
  const waitSeconds = new Histogram({ name: 'ledger_api_decision_wait_seconds', help: 'Time a long-poll waited for its decision', buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] });
  new Gauge({ name: 'ledger_authority_index', help: 'Authority entries folded by this process', registers: [registry], collect() { try { this.set(deps.follower.current().size); } catch { /* the follower failed: /readyz says so */ } } });

  // Only a Kafka cluster answers clusterSize (the embedded log is one node), and only Kafka writes transaction commit markers.
  const operatorMetrics = new OperatorMetrics(registry, deps.pool, deps.logIndex, deps.eventPartitions, { bus: deps.bus, topics: deps.topics, commitMarkers: deps.bus.clusterSize !== undefined });
  deps.logIndex.onEntry((_partition, entry) => operatorMetrics.observe(entry));
  const tracker = new StatementTracker();
  new Gauge({ name: 'ledger_api_pending_statements', help: 'Statements this API accepted that the sequencer has not written yet', registers: [registry], collect() { this.set(tracker.pendingCount); } });
  const passedOver = new Counter({ name: 'ledger_api_statements_passed_over_total', help: 'Accepted statements never seen sequenced although one accepted later on the same partition was (missed by the index, or lost before intake)', registers: [registry] });
  new Gauge({ name: 'ledger_api_oldest_pending_seconds', help: 'How long the oldest accepted, unsequenced statement has waited', registers: [registry], collect() { this.set(tracker.oldestPendingMs(Date.now()) / 1000); } });
  deps.logIndex.onEntry((partition, entry) => {
    const statement = entry.envelope.statement;
    let passed: readonly string[] = [];
    if (statement.type === 'intake.rejected') {
      const body = statement.body as { code: string; detail: string; input: string };
      if (isReasonCode(body.code)) passed = tracker.rejected(body.input, body.code, body.detail, partition, entry.index);
    } else passed = tracker.admitted(statement.id, partition, entry.index);
    if (passed.length > 0) {
      passedOver.inc(passed.length);
      log(`api: ${passed.length} accepted statement(s) on partition ${partition} were never seen sequenced, though one accepted later was (its entry ${entry.index}): missed by this API's index or lost before intake; no longer counted as waiting (${passed.slice(0, 3).join(', ')}${passed.length > 3 ? ', ...' : ''})`);
    }
  });
  const rate = new RateLimiter(deps.rateLimit ?? DEFAULT_RATE_LIMIT);
  const recordBudget = new RateLimiter(deps.refusalRecordLimit ?? DEFAULT_REFUSAL_RECORD_LIMIT);
  // One limiter for unauthenticated refusals: each sender address, and '*' for all of them together.
  const anonymousBudget = new RateLimiter(deps.refusalRecordLimit ?? DEFAULT_REFUSAL_RECORD_LIMIT);
  const hosts = new HostAllowList(deps.allowedHosts ?? []);
  const readAuth = deps.readAuth ?? 'signed';
  if (readAuth === 'open') log('api: WARNING: readAuth is open: anyone who reaches the port reads the whole log, every proposal, the approval queue and /metrics');
  // Every API process of the installation records the reads it accepts in the database they share (read_nonces), so a
  // captured read is accepted once by all of them together, and after a restart too.
  const authenticator = new ReadAuthenticator({
    installation: deps.installation,
    keyOf: (keyId) => deps.follower.current().state.key(keyId),
    nonces: { claim: (keyId, nonce, expiresAtMs, nowMs) => claimReadNonce(deps.pool, { keyId, nonce, expiresAtMs, nowMs }) },
    ...(deps.metricsToken === undefined ? {} : { metricsToken: deps.metricsToken }),
  });
  const readers = new WeakMap<FastifyRequest, Reader>();
  /** The reader a route's handler answers (set by the authentication hook); unset, nobody proven: it reads nothing (fail closed). */
  const readerOf = (req: FastifyRequest): Reader => readers.get(req) ?? { kind: 'anonymous' };
  /** Statement authors this API accepted or refused, by statement id (who may read a statement's status). */
  const authors = new Map<string, string>();
  const rememberAuthor = (id: string, principal: string): void => {
    authors.set(id, principal);
    if (authors.size > 100_000) {
      const oldest = authors.keys().next();
      if (oldest.done !== true) authors.delete(oldest.value);
    }
  };

  const app = Fastify({
    ...(deps.tls === undefined ? {} : { https: { cert: deps.tls.cert, key: deps.tls.key } }),
    bodyLimit: BODY_LIMIT,
    logger: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors the router meets before any route or hook (bad percent-encoding, over-long parameters): typed like the rest.
    frameworkErrors: (err, _req, reply) => {
      const known = FASTIFY_ERRORS[err.code];
      const error = known?.error() ?? badArgument('the request could not be routed');
      if (error instanceof LedgerError) refused.inc({ code: error.code });
      else operational.inc({ code: error.code });
      void (reply as unknown as FastifyReply).code(known?.status ?? 400).send(errorBody(error));
    },
  });
  // Raw bytes in, so the strict parser (not fastify's JSON.parse) sees every body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', (_req, _payload, done) => done(new LedgerError(ReasonCode.SCHEMA_INVALID, 'content type must be application/json'), undefined));

  const fail = (reply: FastifyReply, err: ApiError, status = statusOf(err)): FastifyReply => {
    if (err instanceof LedgerError) refused.inc({ code: err.code });
    else operational.inc({ code: err.code });
    return reply.code(status).send(errorBody(err));
  };
  app.setErrorHandler(async (err, req, reply) => {
    if (err instanceof LedgerError || err instanceof OperationalError) return fail(reply, await recordedUnread(req, err));
    const code = (err as { code?: unknown }).code;
    const known = typeof code === 'string' ? FASTIFY_ERRORS[code] : undefined;
    if (known !== undefined) return fail(reply, await recordedUnread(req, known.error()), known.status);
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 413) return fail(reply, await recordedUnread(req, new LedgerError(ReasonCode.SCHEMA_INVALID, 'body too large')));
    if (status !== undefined && status >= 400 && status < 500) return fail(reply, badArgument((err as Error).message));
    // Postgres down or restarting: an outage, retryable. Anything else is the ledger's own bug: logged, never a refusal code.
    const mapped = postgresError(err, 'the database');
    if (mapped instanceof OperationalError) return fail(reply, mapped);
    log(`api: internal error on ${req.method} ${req.routeOptions.url ?? '?'}: ${(err as Error).stack ?? String(err)}`);
    return fail(reply, new OperationalError(OperationalCode.INTERNAL, 'internal error', { cause: err, retryable: true }));
  });
  app.setNotFoundHandler((_req, reply) => fail(reply, notFound('no such route')));
  // One structured line per request: method, route, status and time taken (the query string is left out: it may name agents).
  app.addHook('onResponse', async (req, reply) => {
    requestLog.info({ method: req.method, route: req.routeOptions.url ?? null, path: req.url.split('?')[0]?.slice(0, 200), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: req.ip }, 'request');
  });

  // Every request: the Host must be one this API serves (a page elsewhere cannot reach it by DNS rebinding),
  // and its body must not be compressed (the byte limits apply to what arrives).
  app.addHook('onRequest', async (req, reply) => {
    const host = req.headers.host;
    if (host === undefined || host === '') return fail(reply, badArgument('a Host header is required'));
    const address = req.socket.localPort;
    if (!hosts.allows(host, address)) return fail(reply, new OperationalError(OperationalCode.BAD_ARGUMENT, `host ${JSON.stringify(host.slice(0, 100))} is not served here`), 421);
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return fail(reply, badArgument(`content encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted: send the body uncompressed`), 415);
    }
    return undefined;
  });
  // Every read but the public ones: a signature by a registered, unrevoked key, fresh and never seen before.
  app.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions.url;
    if (route === undefined || isPublicRoute(req.method, route)) return undefined;
    if (readAuth === 'open') {
      readers.set(req, { kind: 'open' });
      return undefined;
    }
    // A signed read is bodiless (it signs the empty body's hash): a request that brings a body is refused, not half-checked.
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) return fail(reply, badArgument('a signed read carries no body'));
    try {
      const header = req.headers.authorization;
      readers.set(req, await authenticator.authenticate(req.method, req.url, header, { allowMetricsToken: route === '/metrics' }));
    } catch (err) {
      if (err instanceof OperationalError) return fail(reply, err);
      throw err;
    }
    return undefined;
  });
  // Path and query values are untrusted: no control characters (NUL first of all), no repeated keys, bounded length.
  app.addHook('preValidation', async (req: FastifyRequest) => {
    for (const [name, value] of Object.entries((req.params ?? {}) as Record<string, unknown>)) {
      if (typeof value !== 'string' || CONTROL.test(value)) throw badArgument(`path parameter ${name} carries a control character`);
    }
    for (const [name, value] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
      if (typeof value !== 'string') throw badArgument(`query parameter ${name.slice(0, 40)} is given more than once`);
      if (value.length > MAX_QUERY_VALUE) throw badArgument(`query parameter ${name.slice(0, 40)} is too long`);
      if (CONTROL.test(value)) throw badArgument(`query parameter ${name.slice(0, 40)} carries a control character`);
    }
  });

  // Decision long-poll: one LISTEN connection wakes every waiter of a proposal.
  const waiters = new Map<string, Set<() => void>>();
  // ...and, first, the log itself: a final decision is answered as soon as this process indexes its entry, without
  // waiting for the projector's write and its NOTIFY. The row is the one the projector folds from the same entry.
  const recentFinal = new Map<string, EnforcementRow>();
  deps.logIndex.onEntry((_partition, entry) => {
    const statement = entry.envelope.statement;
    if (statement.type !== 'decision.recorded') return;
    const body = statement.body as BodyOf<'decision.recorded'>;
    if (body.outcome === 'verify_first') return;
    remember(recentFinal, body.proposal, enforcementRowOf(entry, statementHash(statement)), RECENT_DECISIONS);
    const set = waiters.get(body.proposal);
    if (set !== undefined) for (const wake of set) wake();
  });
  const finalDecisionOf = async (proposal: string): Promise<EnforcementRow | null> => recentFinal.get(proposal) ?? decisionFor(deps.pool, proposal);
  // Confirmation requests as this process indexes them (the projection may be a moment behind): answers are judged against them.
  const recentRequests = new Map<string, OpenRequest>();
  deps.logIndex.onEntry((_partition, entry) => {
    const statement = entry.envelope.statement;
    if (statement.type !== 'confirmation.requested') return;
    const body = statement.body as BodyOf<'confirmation.requested'>;
    remember(recentRequests, statementHash(statement), { proposal: body.proposal, agentId: body.agentId, tier: body.tier, status: 'pending', deadlineMs: Date.parse(body.deadline) }, RECENT_REQUESTS);
  });
  const listener = new DecisionListener(
    hasNotifications(deps.pool) ? deps.pool : deps.pgUrl,
    (proposal) => {
      const set = waiters.get(proposal);
      if (set !== undefined) for (const wake of set) wake();
    },
    {
      // Notifications sent while no connection listened are lost: every waiter looks again.
      onReconnect: () => {
        for (const set of waiters.values()) for (const wake of set) wake();
      },
      log,
    },
  );
  await listener.start();
  new Gauge({ name: 'ledger_api_decision_listener_up', help: '1 while the decision LISTEN connection to Postgres is up', registers: [registry], collect() { this.set(listener.connected ? 1 : 0); } });
  new Gauge({ name: 'ledger_api_decision_listener_losses', help: 'Decision LISTEN connections lost (and re-opened) since start', registers: [registry], collect() { this.set(listener.losses); } });
  const expiry = setInterval(() => {
    const freshnessMs = freshness();
    if (freshnessMs !== undefined) tracker.expire(Date.now(), 2 * freshnessMs + 60_000);
    // Signed reads no API process would accept any more: any process deletes them (Postgres unavailable: next time).
    if (readAuth === 'signed') expireReadNonces(deps.pool, Date.now()).catch(() => undefined);
  }, 10_000);
  expiry.unref();

  function freshness(): number | undefined {
    try {
      return deps.follower.current().state.config?.freshnessMs;
    } catch {
      return undefined;
    }
  }

  /**
   * Publishes a signed statement the API refused, marked so that the
   * sequencer records it as `intake.rejected` with the API's code: every
   * refusal of a signed statement is on the log and on its refusal topic.
   * Bounded per principal, so a refusal flood cannot fill the log.
   */
  async function record(raw: Buffer, envelope: Envelope, err: LedgerError): Promise<void> {
    const statement = envelope.statement;
    tracker.refused(statement.id, err.code, err.message);
    rememberAuthor(statement.id, statement.author.principal);
    if (!recordBudget.take(statement.author.principal, Date.now())) {
      unrecorded.inc({ reason: 'budget' });
      return;
    }
    let partition: number;
    try {
      partition = partitionOf(statement, deps.eventPartitions);
    } catch {
      partition = 0;
    }
    if (!Number.isSafeInteger(partition) || partition < 0 || partition > deps.eventPartitions) partition = 0;
    await publishRefusal(raw, partition, (statement.body as { agentId?: string }).agentId ?? null, err);
  }

  /** Publishes refused bytes to intake, marked so that the sequencer records them as `intake.rejected` with `err`'s code. */
  async function publishRefusal(raw: Buffer, partition: number, key: string | null, err: LedgerError): Promise<void> {
    try {
      await deps.bus.publish([
        {
          topic: deps.topics.intake,
          partition,
          key,
          value: raw,
          headers: { [REFUSED_HEADER]: err.code, [REFUSED_DETAIL_HEADER]: `refused at the API: ${err.message}`.slice(0, 300) },
        },
      ]);
      recorded.inc({ code: err.code });
    } catch (publishError) {
      unrecorded.inc({ reason: 'unavailable' });
      log(`api: could not record a refusal (${err.code}): ${(publishError as Error).message}`);
    }
  }

  async function recordAnonymous(raw: Buffer, address: string, err: LedgerError): Promise<void> {
    const now = Date.now();
    if (!anonymousBudget.take(`address:${address}`, now) || !anonymousBudget.take('*', now)) {
      unrecorded.inc({ reason: 'budget' });
      return;
    }
    // The partition the bytes claim when they name an agent, else one chosen by their hash: never the authority stream.
    let partition = 1 + (createHash('sha256').update(raw).digest().readUInt32BE(0) % deps.eventPartitions);
    try {
      const claimed = (JSON.parse(raw.toString('utf8')) as { statement?: { body?: { agentId?: unknown } } } | null)?.statement?.body?.agentId;
      if (typeof claimed === 'string' && Principal.safeParse(claimed).success) partition = eventPartitionOf(claimed, deps.eventPartitions);
    } catch {
      // Not JSON: the hash's partition.
    }
    await publishRefusal(raw, partition, null, err);
  }

  /**
   * A submission refused before its body was read (content type, size) is
   * recorded like any unauthenticated refusal, under the sender's address
   * and the global budget: what is recorded is what the request said of
   * itself (method, content type and length), the body was never read.
   * Returns `err` for the answer.
   */
  async function recordedUnread<E extends ApiError>(req: FastifyRequest, err: E): Promise<E> {
    if (!(err instanceof LedgerError) || req.method !== 'POST' || req.routeOptions.url !== '/v1/statements' || Buffer.isBuffer(req.body)) return err;
    const header = (name: string): string => String(req.headers[name] ?? '').slice(0, 100);
    const unread = JSON.stringify({ unreadBody: { method: req.method, path: '/v1/statements', contentType: header('content-type'), contentLength: header('content-length') } });
    await recordAnonymous(Buffer.from(unread), req.ip, err);
    return err;
  }

  app.post('/v1/statements', async (req, reply) => {
    if (!Buffer.isBuffer(req.body)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'content type must be application/json');
    const raw = req.body;
    let envelope: Envelope;
    let signers: readonly string[];
    try {
      const value = parseStrictJsonBytes(raw, { maxBytes: BODY_LIMIT, maxDepth: 32 });
      const parsed = EnvelopeSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid envelope'}`);
      }
      envelope = parsed.data as unknown as Envelope;
      signers = verifyEnvelopeSignatures(envelope, canonicalJson(envelope.statement), nodeEd25519);
    } catch (err) {
      // Nobody is proven to have said this: recorded under the sender's address and a global budget.
      if (err instanceof LedgerError) await recordAnonymous(raw, req.ip, err);
      throw err;
    }
    const statement = envelope.statement;
    const now = Date.now();
    if (!rate.take(statement.author.principal, now)) {
      const err = new LedgerError(ReasonCode.RATE_LIMIT, `${statement.author.principal} is over its statement budget`, { retryable: true });
      await record(raw, envelope, err);
      throw err;
    }
    const { state, size } = deps.follower.current();
    // Before the authority stream's genesis is folded (a fresh installation starting) nothing can be judged:
    // a start-up outage, retryable, never a refusal of the statement.
    if (state.config === undefined && statement.type !== 'genesis') throw new OperationalError(OperationalCode.UNAVAILABLE, 'the ledger has not folded its genesis yet: retry shortly', { retryable: true });
    try {
      // What the API can know at once is answered at once, with the code the sequencer would record.
      const freshnessMs = state.config?.freshnessMs;
      const issuedAt = Date.parse(statement.issuedAt);
      if (freshnessMs !== undefined && Math.abs(now - issuedAt) > freshnessMs) {
        throw new LedgerError(ReasonCode.REPLAY, now > issuedAt ? 'statement is stale: issued longer ago than the freshness window' : 'statement is issued in the future beyond the freshness window');
      }
      if (tracker.seen(statement.id)) throw new LedgerError(ReasonCode.REPLAY, `statement ${statement.id} was already submitted`);
      state.authorize(statement, signers, size);
      // After the role, as in the sequencer's admission: any other author gets KEY_ROLE, the code verify-chain gives.
      if (statement.type === 'intake.rejected') throw new LedgerError(ReasonCode.POLICY_VIOLATION, 'intake.rejected is written by the sequencer only');
      // Registry and grant rules (four eyes, lifetimes, delegation...): refused here with the code the sequencer would record.
      state.check(statement, now);
      if (statement.type === 'human.response') await refuseAnswerOutOfScope(statement.body as BodyOf<'human.response'>, now);
    } catch (err) {
      if (err instanceof LedgerError) await record(raw, envelope, err);
      throw err;
    }
    // The ledger cannot sequence what it has not reached for a while: refuse now, retryable, instead of letting it go stale.
    const backlogLimit = deps.maxBacklogMs ?? Math.min(30_000, Math.floor((state.config?.freshnessMs ?? 90_000) / 3));
    const waited = tracker.oldestPendingMs(now);
    if (waited > backlogLimit) {
      throw new OperationalError(OperationalCode.UNAVAILABLE, `the ledger has not sequenced accepted statements for ${Math.round(waited / 1000)} s; try again shortly`, { retryable: true });
    }
    const partition = partitionOf(statement, deps.eventPartitions);
    const inputHash = createHash('sha256').update(raw).digest('hex');
    tracker.accepted(statement.id, inputHash, now, partition);
    rememberAuthor(statement.id, statement.author.principal);
    try {
      await deps.bus.publish([{ topic: deps.topics.intake, partition, key: (statement.body as { agentId?: string }).agentId ?? null, value: raw }]);
    } catch (err) {
      tracker.forget(statement.id);
      throw err;
    }
    submitted.inc({ type: statement.type });
    return reply.code(202).send({ id: statement.id, statementHash: statementHash(statement), partition, status: `/v1/statements/${statement.id}` });
  });

  /**
   * The answers an approver (or the chat bridge) may give: to a confirmation
   * request that is open (pending, before its deadline, its proposal without a
   * final decision), naming that request's own proposal and agent, and, for a
   * platform-assurance answer, at a tier such an answer counts at. Anything
   * else would count for nothing (the rulebook's countResponse) and is refused
   * here at once with STALE_APPROVAL, one answer whether the request is
   * unknown, closed, late or about another proposal, so answers cannot probe
   * for requests outside the approver's queue. Judged on the projection, else
   * on the requests this process indexed from the log; with Postgres
   * unavailable the gate judges the answer when it arrives.
   */
  async function refuseAnswerOutOfScope(answer: BodyOf<'human.response'>, nowMs: number): Promise<void> {
    let decided: EnforcementRow | null;
    let request: OpenRequest | undefined;
    try {
      decided = await finalDecisionOf(answer.proposal);
      const found = await deps.pool.query<{ proposal_hash: string; agent_id: string; tier: number; status: string; deadline: Date | string }>(
        'SELECT proposal_hash, agent_id, tier, status, deadline FROM pending_approvals WHERE request_hash = $1',
        [answer.request],
      );
      const row = found.rows[0];
      request = row === undefined
        ? recentRequests.get(answer.request)
        : { proposal: row.proposal_hash, agentId: row.agent_id, tier: Number(row.tier), status: row.status, deadlineMs: new Date(row.deadline).getTime() };
    } catch {
      return;
    }
    const open = (r: OpenRequest | undefined): r is OpenRequest =>
      decided === null && r !== undefined && r.status === 'pending' && nowMs <= r.deadlineMs + ANSWER_DEADLINE_GRACE_MS && r.proposal === answer.proposal && r.agentId === answer.agentId;
    if (!open(request)) {
      throw new LedgerError(ReasonCode.STALE_APPROVAL, `confirmation request ${answer.request.slice(0, 16)} is not open to this answer (unknown, closed, past its deadline, or about another proposal or agent)`);
    }
    if (answer.assurance === 'platform' && request.tier > MAX_PLATFORM_ASSURANCE_TIER) {
      throw new LedgerError(ReasonCode.KEY_ROLE, `a platform-assurance answer counts up to tier ${MAX_PLATFORM_ASSURANCE_TIER}; this request is tier ${request.tier}: an approver's own key answers it`);
    }
  }

  app.get<{ Params: { id: string } }>('/v1/statements/:id', async (req) => {
    const id = req.params.id;
    if (!STATEMENT_ID.test(id)) throw badArgument('a statement id is a lower-case UUIDv7');
    const reader = readerOf(req);
    // This process's own record first (pending, refused, rejected), else the projection (any API process, any age).
    // The projection is asked every time, so the work is the same whether the statement is the reader's, another's or unknown.
    const sequenced = await sequencedStatus(deps.pool, id);
    const status = tracker.status(id) ?? sequenced?.status;
    // Someone else's statement is answered exactly as one that does not exist.
    const missing = hiddenOrMissing("no such statement for this reader: not on the log, not accepted or refused by this API (or its outcome no longer kept), or not the reader's own");
    if (status === undefined) throw missing;
    if (!readsEverything(reader)) {
      // Its author reads a statement's status: known from this API's own record, else from the admitted entry's row.
      let author = authors.get(id) ?? sequenced?.author ?? undefined;
      // Rows projected before migration 007 name no author: the entry itself does.
      if (author === undefined && status.status === 'admitted') author = authorOf(await deps.logIndex.entryText(status.partition, status.index));
      if (author === undefined || author !== principalOf(reader)) throw missing;
    }
    return { id, ...status };
  });

  app.get<{ Params: { proposal: string }; Querystring: { waitMs?: string } }>('/v1/decisions/:proposal', async (req, reply) => {
    const proposal = req.params.proposal;
    if (!Hash.safeParse(proposal).success) throw badArgument('proposal must be a 64-hex statement hash');
    const waitMs = Math.min(parseWholeNumber(req.query.waitMs ?? '0', 'waitMs'), MAX_WAIT_MS);
    const reader = readerOf(req);
    const started = Date.now();
    // Nothing is said about a decision the reader may not read (its agent's, an approver's who answered it, an admin's):
    // it is answered as a proposal without a decision, after the same wait, so a principal cannot probe for others'.
    let decision = await readableDecision(reader, proposal);
    if (decision === null && waitMs > 0) {
      decision = await new Promise((resolve) => {
        let done = false;
        const set = waiters.get(proposal) ?? new Set<() => void>();
        waiters.set(proposal, set);
        const finish = (value: EnforcementRow | null): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          set.delete(wake);
          if (set.size === 0) waiters.delete(proposal);
          resolve(value);
        };
        const wake = (): void => {
          void readableDecision(reader, proposal).then((d) => { if (d !== null) finish(d); }, () => undefined);
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
    let text = await deps.logIndex.entryText(decision.partition, decision.index);
    for (let tries = 0; text === undefined && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      text = await deps.logIndex.entryText(decision.partition, decision.index);
    }
    if (text === undefined) return reply.code(202).send({ proposal, decision: null });
    return reply.send({ proposal, decision, entry: JSON.parse(text) as unknown });
  });

  /**
   * The final decision about `proposal` if there is one and `reader` may
   * read it, else null. For a reader who may not, the projection is asked
   * even when the log gave the decision, so the work is the same as for an
   * unknown proposal.
   */
  async function readableDecision(reader: Reader, proposal: string): Promise<EnforcementRow | null> {
    const recent = recentFinal.get(proposal);
    const decision = recent ?? (await decisionFor(deps.pool, proposal));
    if (readsEverything(reader)) return decision;
    const readable = await mayReadProposal(reader, proposal, decision?.agentId);
    if (decision !== null && readable) return decision;
    if (recent !== undefined) await decisionFor(deps.pool, proposal);
    return null;
  }

  // Paper trails. An unknown grant or decision is NOT_FOUND (404), retryable: the projection may not have it yet.
  app.get<{ Params: { grantId: string }; Querystring: { limit?: string } }>('/v1/grants/:grantId/trail', async (req) => {
    requireEverything(readerOf(req), 'a grant trail');
    const grantId = checkGrantId(req.params.grantId);
    const decisionLimit = Math.min(parseLimit(req.query.limit ?? String(TRAIL_DECISIONS)), MAX_QUERY_LIMIT);
    const trail = await grantTrail(deps.pool, grantId, { decisionLimit });
    if (trail === null) throw notFound(`no grant ${grantId} in the projection`, true);
    return trail;
  });
  app.get<{ Params: { proposal: string } }>('/v1/decisions/:proposal/trail', async (req) => {
    requireEverything(readerOf(req), 'a decision trail');
    const proposal = req.params.proposal;
    if (!Hash.safeParse(proposal).success) throw badArgument('proposal must be a 64-hex statement hash');
    const trail = await decisionTrail(deps.pool, proposal);
    if (trail === null) throw notFound(`no final decision about proposal ${proposal} in the projection`, true);
    return { proposal, ...trail };
  });
  app.get<{ Querystring: { limit?: string } }>('/v1/pending', async (req) => {
    const reader = readerOf(req);
    if (!holdsRole(reader, ['approver'])) throw forbidden('the pending queue is read by approvers and admins');
    const limit = Math.min(parseLimit(req.query.limit ?? '100'), 1000);
    // An approver's queue is what it may still answer: open requests before their deadline. Admins also see the overdue ones.
    return { pending: await listPending(deps.pool, readsEverything(reader) ? { limit } : { now: new Date(), limit }) };
  });
  app.get<{ Querystring: { agentId?: string } }>('/v1/grants', async (req) => {
    requireOwnAgent(readerOf(req), req.query.agentId, 'the grant table');
    return { grants: await listGrants(deps.pool, req.query.agentId === undefined ? {} : { agentId: checkAgentId(req.query.agentId) as string }) };
  });
  app.get('/v1/refusals/metrics', async (req) => {
    requireEverything(readerOf(req), 'refusal metrics');
    return { metrics: await refusalMetrics(deps.pool, {}) };
  });
  app.get<{ Querystring: { agentId?: string; limit?: string } }>('/v1/enforcement', async (req) => {
    requireOwnAgent(readerOf(req), req.query.agentId, 'enforcement records');
    return { records: await enforcementRecords(deps.pool, { ...(req.query.agentId === undefined ? {} : { agentId: checkAgentId(req.query.agentId) as string }), limit: Math.min(parseLimit(req.query.limit ?? '100'), 1000) }) };
  });
  app.get<{ Querystring: { partition?: string } }>('/v1/checkpoints/latest', async (req, reply) => {
    const partition = parseWholeNumber(req.query.partition ?? '0', 'partition');
    const latest = deps.logIndex.latestCheckpoint(partition);
    if (latest === undefined) return fail(reply, notFound(`no checkpoint yet for partition ${partition}`, true));
    return { partition, size: latest.size, note: latest.note };
  });
  registerTrustRoutes(app, { follower: deps.follower, logIndex: deps.logIndex, readerOf });
  app.get<{ Querystring: { partition?: string; from?: string; to?: string } }>('/v1/consistency', async (req) => {
    const partition = parseWholeNumber(req.query.partition ?? '0', 'partition');
    return deps.logIndex.consistency(partition, parseWholeNumber(req.query.from ?? '0', 'from'), req.query.to === undefined ? undefined : parseWholeNumber(req.query.to, 'to'));
  });
  app.get('/metrics', async (req, reply) => {
    const reader = readerOf(req);
    if (reader.kind !== 'metrics-token' && !readsEverything(reader)) throw forbidden('/metrics is read by admins and the configured scraper token');
    return reply.type(registry.contentType).send(await registry.metrics());
  });
  app.get('/healthz', async (_req, reply) => {
    const health = await deps.health();
    return reply.code(health.ok ? 200 : 503).send(health);
  });
  // Ready when every dependency answers: Postgres, the decision listener, the authority follower, and what the process watches (the broker).
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, { up: boolean; error?: string }> = { ...(deps.dependencies?.() ?? {}) };
    try {
      checks['authority'] = deps.follower.current().state.config === undefined ? { up: false, error: 'no genesis folded yet' } : { up: true };
    } catch (err) {
      checks['authority'] = { up: false, error: (err as Error).message };
    }
    try {
      await deps.pool.query('SELECT 1');
      checks['postgres'] = { up: true };
    } catch (err) {
      checks['postgres'] = { up: false, error: (err as Error).message };
    }
    checks['decisionListener'] = listener.connected ? { up: true } : { up: false, error: 'reconnecting to Postgres' };
    const ready = Object.values(checks).every((c) => c.up);
    if (!ready) {
      const down = Object.entries(checks).filter(([, c]) => !c.up).map(([name, c]) => `${name}: ${c.error ?? 'down'}`);
      return reply.code(503).send({ ready: false, checks, error: { code: OperationalCode.UNAVAILABLE, message: down.join('; '), retryable: true } });
    }
    return reply.send({ ready: true, origin: deps.origin, rootKeys: deps.rootKeys ?? [], readAuth, checks, pendingStatements: tracker.pendingCount, ...deps.readyDetail?.() });
  });
  app.get('/openapi.json', async () => openApiDocument());
  // The id every signed read names (`aud`): a client that pinned nothing asks it once (trust on first use).
  app.get('/v1/installation', async () => ({ installation: deps.installation, origin: deps.origin }));
  registerApprovalRoutes(app, { pool: deps.pool, logIndex: deps.logIndex, readerOf, mayReadProposal });
  registerDashboardRoutes(app, { pool: deps.pool, metrics: operatorMetrics, origin: deps.origin, health: deps.health, readerOf });

  /**
   * Who may read about a proposal (its entry, its decision): an admin or an
   * auditor; the agent that proposed it; an approver while the proposal's
   * confirmation request is open (pending, before its deadline: the queue it
   * may answer), and afterwards only if it answered that request itself.
   * Nobody else: the caller answers them as if the proposal did not exist.
   * An approver's reads always cost the same query, whatever the answer.
   */
  async function mayReadProposal(reader: Reader, proposal: string, agentId: string | undefined): Promise<boolean> {
    if (readsEverything(reader)) return true;
    if (reader.kind !== 'principal') return false;
    if (reader.roles.includes('approver')) {
      const scope = await deps.pool.query(
        `SELECT 1 FROM pending_approvals
         WHERE proposal_hash = $1 AND ((status = 'pending' AND deadline > $2::timestamptz) OR answered_by = $3 OR $3 = ANY(approved_by))
         LIMIT 1`,
        [proposal, new Date().toISOString(), reader.principal],
      );
      if ((scope.rowCount ?? 0) > 0) return true;
    }
    return reader.roles.includes('agent') && agentId !== undefined && agentId === reader.principal;
  }

  return {
    app,
    tracker,
    tls: deps.tls !== undefined,
    close: async () => {
      clearInterval(expiry);
      await app.close();
      await listener.stop();
    },
  };
}

/** Exports (trails, the grant table, refusal metrics): admins only. */
function requireEverything(reader: Reader, what: string): void {
  if (!readsEverything(reader)) throw forbidden(`${what} is read by admins only`);
}

/** A listing an agent may read for itself (`?agentId=` its own principal); admins read all of it. */
function requireOwnAgent(reader: Reader, agentId: string | undefined, what: string): void {
  if (readsEverything(reader)) return;
  if (reader.kind === 'principal' && reader.roles.includes('agent') && agentId === reader.principal) return;
  throw forbidden(`${what} is read by admins, or by an agent for itself (?agentId=its own principal)`);
}

/** The author of a log entry (its JSON text), if it parses. */
export function authorOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const author = (JSON.parse(text) as { envelope?: { statement?: { author?: { principal?: unknown } } } }).envelope?.statement?.author?.principal;
    return typeof author === 'string' ? author : undefined;
  } catch {
    return undefined;
  }
}

/** A grant id from a path (untrusted): what `grant.proposed` allows, 1 to 256 characters. */
function checkGrantId(text: string): string {
  if (text.length < 1 || text.length > 256) throw badArgument('a grant id is 1 to 256 characters');
  return text;
}

function parseWholeNumber(text: string, name: string): number {
  if (!/^\d{1,12}$/.test(text)) throw badArgument(`${name} must be a whole number`);
  return Number(text);
}

function parseLimit(text: string): number {
  const limit = parseWholeNumber(text, 'limit');
  if (limit < 1) throw badArgument('limit must be at least 1');
  return limit;
}

/** An agent id from a query (untrusted): a principal is at most 128 characters. */
function checkAgentId(text: string | undefined): string | undefined {
  if (text !== undefined && (text.length < 1 || text.length > 128)) throw badArgument('agentId is 1 to 128 characters');
  return text;
}
