import { z } from 'zod';
import { KNOWN_CODES } from '@agent-ledger/refusals';
import { EnvelopeSchema } from '@agent-ledger/core';
import { DecisionTrailSchema, GrantTrailSchema } from './trail-schema.js';

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message', 'retryable'], properties: { code: { type: 'string', enum: [...KNOWN_CODES] }, message: { type: 'string' }, retryable: { type: 'boolean' } } } },
};
const refusal = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
const json = (description: string, schema: string) => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } });
const toSchema = (schema: z.ZodType): Record<string, unknown> => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Record<string, unknown>;

/** The OpenAPI 3.1 document of the HTTP API (request schemas generated from the zod sources). */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'agent-ledger API', version: '1.0.0', description: 'Signed, hash-chained audit ledger and action firewall for AI agents.' },
    components: {
      schemas: {
        Envelope: z.toJSONSchema(EnvelopeSchema, { target: 'draft-2020-12' }),
        Error: errorSchema,
        GrantTrail: toSchema(GrantTrailSchema),
        DecisionTrail: toSchema(DecisionTrailSchema),
      },
    },
    paths: {
      '/v1/statements': {
        post: {
          summary: 'Submit a signed statement (proposal, human response, grant write, key write) for sequencing',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } },
          responses: { '202': { description: 'Accepted for intake: {id, statementHash, partition, status}' }, '400': refusal('SCHEMA_INVALID'), '401': refusal('INVALID_SIGNATURE or KEY_UNKNOWN'), '403': refusal('KEY_REVOKED, KEY_ROLE or POLICY_VIOLATION (recorded as intake.rejected)'), '409': refusal('REPLAY (stale, future or already submitted) or STALE_APPROVAL (the request is closed), recorded as intake.rejected'), '415': refusal('BAD_ARGUMENT: a Content-Encoding other than identity'), '429': refusal('RATE_LIMIT: the principal is over its budget'), '503': refusal('UNAVAILABLE: the broker cannot be reached or the ledger is not sequencing; retry') },
        },
      },
      '/v1/decisions/{proposal}': {
        get: {
          summary: "Long-poll one proposal's final decision (woken by Postgres LISTEN/NOTIFY)",
          parameters: [{ name: 'proposal', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } }, { name: 'waitMs', in: 'query', schema: { type: 'integer', maximum: 60000 } }],
          responses: { '200': { description: 'The decision' }, '202': { description: 'No decision yet' }, '400': refusal('BAD_ARGUMENT') },
        },
      },
      '/v1/decisions/{proposal}/trail': {
        get: {
          summary: "A proposal's final decision and the grant chain behind it: the cited grant with its events, then its parent, up to the root grant (empty when no grant was cited)",
          parameters: [{ name: 'proposal', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } }],
          responses: { '200': json('The decision and its grant chain', 'DecisionTrail'), '400': refusal('BAD_ARGUMENT'), '404': refusal('NOT_FOUND: no final decision (yet)') },
        },
      },
      '/v1/grants/{grantId}/trail': {
        get: {
          summary: "A grant's paper trail: its row, its events in ledger order (proposed, co-signed, re-authorised, revoked, with authority indexes), its parent chain, the grants derived from it and the decisions that cited it",
          parameters: [
            { name: 'grantId', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 256 } },
            { name: 'limit', in: 'query', description: 'decision records listed (all are counted); default 1000', schema: { type: 'integer', minimum: 1, maximum: 10000 } },
          ],
          responses: { '200': json('The trail', 'GrantTrail'), '400': refusal('BAD_ARGUMENT'), '404': refusal('NOT_FOUND: no such grant (yet)') },
        },
      },
      '/v1/pending': { get: { summary: 'The pending-approval queue', responses: { '200': { description: 'Pending confirmations' } } } },
      '/v1/grants': { get: { summary: 'The grant table', responses: { '200': { description: 'Grants with provenance' } } } },
      '/v1/refusals/metrics': { get: { summary: 'Refusals by code and minute', responses: { '200': { description: 'Counts' } } } },
      '/v1/enforcement': { get: { summary: 'Enforcement records (decisions)', responses: { '200': { description: 'Records' } } } },
      '/v1/checkpoints/latest': { get: { summary: "A partition's newest signed checkpoint", responses: { '200': { description: 'C2SP signed note' }, '404': refusal('NOT_FOUND: none yet') } } },
      '/v1/statements/{id}': { get: { summary: 'What became of a statement this API accepted: pending, admitted at an index, rejected by the sequencer (with its code), or refused by the API', responses: { '200': { description: '{id, status, ...}' }, '400': refusal('BAD_ARGUMENT'), '404': refusal('NOT_FOUND') } } },
      '/v1/receipts/{partition}/{index}': { get: { summary: 'Entry + inclusion proof + checkpoint; ?waitMs= waits (up to 30 s) for the covering checkpoint', responses: { '200': { description: 'Receipt (SPEC.md section 10)' }, '404': refusal('NOT_FOUND: not checkpointed yet') } } },
      '/v1/trust': { get: { summary: 'The trust document a client pins: trust root, genesis, sequencer/gate/timer/approver keys with their validity ranges', responses: { '200': { description: 'Trust document (SPEC.md section 10.1)' }, '404': refusal('NOT_FOUND: genesis not indexed yet') } } },
      '/v1/consistency': { get: { summary: 'RFC 9162 consistency proof between two sizes', responses: { '200': { description: 'Proof' }, '400': refusal('BAD_ARGUMENT') } } },
      '/metrics': { get: { summary: 'Prometheus metrics', responses: { '200': { description: 'text exposition format' } } } },
      '/healthz': { get: { summary: 'Health (503 when a projection partition halted on INTEGRITY_FAILURE)', responses: { '200': { description: 'ok' }, '503': { description: 'unhealthy' } } } },
      '/readyz': { get: { summary: 'Readiness', responses: { '200': { description: 'ready' }, '503': { description: 'not ready' } } } },
    },
  };
}
