import { z } from 'zod';
import { EnvelopeSchema } from '@agent-ledger/core';
import { DecisionTrailSchema, GrantTrailSchema } from './trail-schema.js';
import {
  AcceptedSchema,
  CheckpointSchema,
  ConsistencySchema,
  DecisionAnswerSchema,
  EnforcementListSchema,
  ErrorBodySchema,
  GrantListSchema,
  HealthSchema,
  InstallationSchema,
  PendingListSchema,
  ProposalDetailSchema,
  ReadySchema,
  ReceiptSchema,
  RefusalMetricsSchema,
  StatementStatusSchema,
} from './wire-schemas.js';

/** A zod schema as a JSON Schema 2020-12 object (the dialect of OpenAPI 3.1), without its `$schema` member. */
function toSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const json = (description: string, schema: string) => ({ description, content: { 'application/json': { schema: ref(schema) } } });

const hashParam = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } });
const wholeParam = (name: string, where: 'path' | 'query', description: string, extra: Record<string, unknown> = {}) => ({
  name,
  in: where,
  ...(where === 'path' ? { required: true } : {}),
  description,
  schema: { type: 'integer', minimum: 0, maximum: 999_999_999_999, ...extra },
});
const limitParam = (description: string, maximum: number) => wholeParam('limit', 'query', description, { minimum: 1, maximum });
const agentParam = { name: 'agentId', in: 'query', description: 'only this agent (a principal, e.g. agent:billing-bot)', schema: { type: 'string', minLength: 1, maxLength: 128 } };

/** Every route answers a bad path or query value with BAD_ARGUMENT, and a wrong Host with 421. */
const common = { '400': error('BAD_ARGUMENT: a path or query value is malformed, repeated or too long'), '421': error('BAD_ARGUMENT: the Host is not served here') };

/**
 * The OpenAPI 3.1 document of the HTTP API: request and response schemas are
 * generated from the zod sources (trail-schema.ts, wire-schemas.ts, the
 * core's Envelope and Entry), so the document cannot drift from what the
 * routes parse and the tests check. Checked by a strict OpenAPI validator in
 * test/src/openapi.int.test.ts.
 */
export function openApiDocument(): Record<string, unknown> {
  return withReadAuth({
    openapi: '3.1.0',
    info: { title: 'agent-ledger API', version: '1.0.0', description: 'Signed, hash-chained audit ledger and action firewall for AI agents.', license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: '/', description: 'this installation' }],
    tags: [{ name: 'statements' }, { name: 'decisions' }, { name: 'approvals' }, { name: 'grants' }, { name: 'log' }, { name: 'operations' }],
    components: {
      schemas: {
        Envelope: toSchema(EnvelopeSchema, 'input'),
        Error: toSchema(ErrorBodySchema),
        Accepted: toSchema(AcceptedSchema),
        StatementStatus: toSchema(StatementStatusSchema),
        DecisionAnswer: toSchema(DecisionAnswerSchema),
        DecisionTrail: toSchema(DecisionTrailSchema),
        GrantTrail: toSchema(GrantTrailSchema),
        GrantList: toSchema(GrantListSchema),
        PendingList: toSchema(PendingListSchema),
        ProposalDetail: toSchema(ProposalDetailSchema),
        RefusalMetrics: toSchema(RefusalMetricsSchema),
        EnforcementList: toSchema(EnforcementListSchema),
        Checkpoint: toSchema(CheckpointSchema),
        Receipt: toSchema(ReceiptSchema),
        Consistency: toSchema(ConsistencySchema),
        Health: toSchema(HealthSchema),
        Installation: toSchema(InstallationSchema),
        Ready: toSchema(ReadySchema),
      },
    },
    paths: {
      '/v1/statements': {
        post: {
          operationId: 'submitStatement',
          tags: ['statements'],
          summary: 'Submit a signed statement (proposal, human response, grant write, key write) for sequencing',
          requestBody: { required: true, content: { 'application/json': { schema: ref('Envelope') } } },
          responses: {
            '202': json('Accepted for intake', 'Accepted'),
            '400': error('SCHEMA_INVALID'),
            '401': error('INVALID_SIGNATURE or KEY_UNKNOWN'),
            '403': error('KEY_REVOKED, KEY_ROLE or POLICY_VIOLATION (recorded as intake.rejected)'),
            '409': error('REPLAY (stale, future or already submitted) or STALE_APPROVAL (a human response naming no confirmation request open to it: unknown, closed, past its deadline or about another proposal), recorded as intake.rejected'),
            '415': error('BAD_ARGUMENT: a Content-Encoding other than identity'),
            '421': common['421'],
            '429': error('RATE_LIMIT: the principal is over its budget'),
            '503': error('UNAVAILABLE: the broker cannot be reached or the ledger is not sequencing; retry'),
          },
        },
      },
      '/v1/statements/{id}': {
        get: {
          operationId: 'getStatementStatus',
          tags: ['statements'],
          summary: 'What became of a statement this API accepted: pending, admitted at an index, rejected by the sequencer (with its code), or refused by the API',
          parameters: [{ name: 'id', in: 'path', required: true, description: 'the statement id (lower-case UUIDv7)', schema: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' } }],
          responses: { '200': json('The statement status', 'StatementStatus'), ...common, '404': error("NOT_FOUND: not submitted here, no longer kept, or not the reader's own (one answer for all three)") },
        },
      },
      '/v1/decisions/{proposal}': {
        get: {
          operationId: 'getDecision',
          tags: ['decisions'],
          summary: "Long-poll one proposal's final decision (woken by Postgres LISTEN/NOTIFY)",
          parameters: [hashParam('proposal', "the proposal's statement hash"), wholeParam('waitMs', 'query', 'milliseconds to wait for the decision (at most 60000); 0 answers at once', { maximum: 60000 })],
          responses: { '200': json('The decision and its signed entry', 'DecisionAnswer'), '202': json("No decision yet, or none the reader may read (decision is null): another principal's decision is answered as an unknown proposal", 'DecisionAnswer'), ...common },
        },
      },
      '/v1/decisions/{proposal}/trail': {
        get: {
          operationId: 'getDecisionTrail',
          tags: ['decisions', 'grants'],
          summary: "A proposal's final decision and the grant chain behind it: the cited grant with its events, then its parent, up to the root grant (empty when no grant was cited)",
          parameters: [hashParam('proposal', "the proposal's statement hash")],
          responses: { '200': json('The decision and its grant chain', 'DecisionTrail'), ...common, '404': error('NOT_FOUND: no final decision (yet)') },
        },
      },
      '/v1/proposals/{hash}': {
        get: {
          operationId: 'getProposal',
          tags: ['approvals'],
          summary: 'The signed proposal.submitted entry as the log holds it, and the newest confirmation.requested entry about it: what an approver checks before answering',
          parameters: [hashParam('hash', "the proposal's statement hash")],
          responses: { '200': json('The proposal entry and its confirmation request', 'ProposalDetail'), ...common, '404': error("NOT_FOUND: no such proposal on the log (yet), or not the reader's to read (one answer for both)") },
        },
      },
      '/v1/pending': {
        get: {
          operationId: 'listPending',
          tags: ['approvals'],
          summary: 'The pending-approval queue, soonest deadline first',
          parameters: [limitParam('rows to list (default 100, at most 1000)', 1000)],
          responses: { '200': json('Open confirmation requests', 'PendingList'), ...common },
        },
      },
      '/v1/pending/stream': {
        get: {
          operationId: 'streamPending',
          tags: ['approvals'],
          summary: 'Server-sent events: `event: pending` with `{count}` at once and whenever the open queue changes',
          responses: { '200': { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, '421': common['421'], '503': error('UNAVAILABLE: too many live streams open') },
        },
      },
      '/v1/grants': {
        get: {
          operationId: 'listGrants',
          tags: ['grants'],
          summary: 'The grant table',
          parameters: [agentParam],
          responses: { '200': json('Grants with provenance', 'GrantList'), ...common },
        },
      },
      '/v1/grants/{grantId}/trail': {
        get: {
          operationId: 'getGrantTrail',
          tags: ['grants'],
          summary: "A grant's paper trail: its row, its events in ledger order (proposed, co-signed, re-authorised, revoked, with authority indexes), its parent chain, the grants derived from it and the decisions that cited it",
          parameters: [
            { name: 'grantId', in: 'path', required: true, description: 'the grant id', schema: { type: 'string', minLength: 1, maxLength: 256 } },
            limitParam('decision records listed (all are counted); default 1000', 10000),
          ],
          responses: { '200': json('The trail', 'GrantTrail'), ...common, '404': error('NOT_FOUND: no such grant (yet)') },
        },
      },
      '/v1/refusals/metrics': {
        get: { operationId: 'getRefusalMetrics', tags: ['operations'], summary: 'Refusals by code and minute, oldest first', responses: { '200': json('Counts', 'RefusalMetrics'), ...common } },
      },
      '/v1/enforcement': {
        get: {
          operationId: 'listEnforcementRecords',
          tags: ['decisions'],
          summary: 'Enforcement records (decisions), newest first',
          parameters: [agentParam, limitParam('records to list (default 100, at most 1000)', 1000)],
          responses: { '200': json('Records', 'EnforcementList'), ...common },
        },
      },
      '/v1/checkpoints/latest': {
        get: {
          operationId: 'getLatestCheckpoint',
          tags: ['log'],
          summary: "A partition's newest signed checkpoint",
          parameters: [wholeParam('partition', 'query', 'ledger partition (default 0, the authority stream)')],
          responses: { '200': json('The C2SP signed note', 'Checkpoint'), ...common, '404': error('NOT_FOUND: none yet') },
        },
      },
      '/v1/receipts/{partition}/{index}': {
        get: {
          operationId: 'getReceipt',
          tags: ['log'],
          summary: 'Entry, inclusion proof and covering checkpoint',
          parameters: [wholeParam('partition', 'path', 'ledger partition'), wholeParam('index', 'path', 'entry index in the partition'), wholeParam('waitMs', 'query', 'milliseconds to wait for the covering checkpoint (at most 30000); 0 answers at once', { maximum: 30000 })],
          responses: { '200': json('Receipt (SPEC.md section 10)', 'Receipt'), ...common, '404': error("NOT_FOUND: not checkpointed yet, or not about the reader (one body for both)") },
        },
      },
      '/v1/consistency': {
        get: {
          operationId: 'getConsistencyProof',
          tags: ['log'],
          summary: 'RFC 9162 consistency proof between two tree sizes of a partition',
          parameters: [wholeParam('partition', 'query', 'ledger partition (default 0)'), wholeParam('from', 'query', 'the older tree size (default 0)'), wholeParam('to', 'query', 'the newer tree size (default: the current size)')],
          responses: { '200': json('Proof', 'Consistency'), ...common },
        },
      },
      '/metrics': {
        get: { operationId: 'getMetrics', tags: ['operations'], summary: 'Prometheus metrics', responses: { '200': { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } } },
      },
      '/healthz': {
        get: { operationId: 'getHealth', tags: ['operations'], summary: 'Health (503 when a projection partition halted on INTEGRITY_FAILURE)', responses: { '200': json('healthy', 'Health'), '503': json('unhealthy', 'Health') } },
      },
      '/readyz': {
        get: { operationId: 'getReadiness', tags: ['operations'], summary: 'Readiness: Postgres, the broker, the decision listener and the authority follower answer', responses: { '200': json('ready', 'Ready'), '503': error('UNAVAILABLE: a dependency is down') } },
      },
      '/': {
        get: { operationId: 'getLandingPage', tags: ['operations'], summary: 'Landing page for operators: links to the dashboard, the approval page, this document and the metrics', responses: { '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } } },
      },
      '/dashboard': {
        get: { operationId: 'getDashboard', tags: ['operations'], summary: 'Operator dashboard: server-rendered SVG of the pending queue, decisions and refusals per minute, approval latency and checkpoint health (no script)', responses: { '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } } },
      },
      '/openapi.json': {
        get: { operationId: 'getOpenApiDocument', tags: ['operations'], summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } } },
      },
      '/v1/installation': {
        get: {
          operationId: 'getInstallation',
          tags: ['log'],
          summary: "The installation id every signed read names (aud): the statement hash of the installation's genesis. A client that pinned a trust document takes it from its genesis instead",
          responses: { '200': json('The installation', 'Installation'), ...common },
        },
      },
      '/v1/trust': {
        get: {
          operationId: 'getTrust',
          tags: ['log'],
          summary: 'The trust document a client pins: trust root, genesis, sequencer/gate/timer/approver keys with their validity ranges (SPEC.md section 10.1)',
          responses: { '200': { description: 'Trust document (SPEC.md section 10.1)', content: { 'application/json': { schema: { type: 'object' } } } }, ...common, '404': error('NOT_FOUND: genesis not indexed yet') },
        },
      },
    },
  });
}

/** Operations anyone may call: health, the trust document, this document, the landing page, statement submission (each statement carries its signatures). */
const PUBLIC_OPERATIONS: ReadonlySet<string> = new Set(['getHealth', 'getReadiness', 'getTrust', 'getInstallation', 'getOpenApiDocument', 'getLandingPage', 'submitStatement']);

/**
 * Declares the signed-read scheme (docs/http.md "Signed reads") and, on every
 * other operation, its 401 and 403 answers; `/metrics` also takes the
 * scraper's bearer token.
 */
function withReadAuth(document: Record<string, unknown>): Record<string, unknown> {
  const components = document['components'] as Record<string, unknown>;
  components['securitySchemes'] = {
    ledgerRead: { type: 'apiKey', in: 'header', name: 'authorization', description: 'Ledger-Ed25519 keyId=<64 hex>,aud=<64 hex>,ts=<unix ms>,nonce=<32 hex>,sig=<base64>: an Ed25519 signature by a registered, unrevoked key over "agent-ledger/read/v2\\n" + METHOD + "\\n" + aud (GET /v1/installation) + "\\n" + path with query + "\\n" + ts + "\\n" + nonce + "\\n" (the empty body\'s hash: reads carry no body); ts within 30 s, each (keyId, nonce) accepted once by all API processes of the installation' },
    metricsToken: { type: 'http', scheme: 'bearer', description: 'the scraper token of api.metricsTokenFile (/metrics only)' },
  };
  for (const item of Object.values(document['paths'] as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const operation of Object.values(item)) {
      if (PUBLIC_OPERATIONS.has(String(operation['operationId']))) {
        operation['security'] = [];
        continue;
      }
      operation['security'] = operation['operationId'] === 'getMetrics' ? [{ ledgerRead: [] }, { metricsToken: [] }] : [{ ledgerRead: [] }];
      operation['responses'] = {
        ...(operation['responses'] as Record<string, unknown>),
        '401': error('UNAUTHENTICATED: no read signature, or a stale, replayed or bad one, or an unknown or revoked key'),
        '403': error("FORBIDDEN: a route outside the principal's role (exports without the admin role, the queue without the approver role, another agent's listing); a single proposal, decision, receipt or statement the reader may not see is answered as unknown instead"),
      };
    }
  }
  return document;
}
