import { z } from 'zod';
import { KNOWN_CODES } from '@agent-ledger/refusals';
import { EntrySchema } from '@agent-ledger/core';
import { EnforcementRecordSchema, GrantSchema } from './trail-schema.js';

/**
 * The wire form of the API's answers other than the paper trails
 * (trail-schema.ts): one zod source for the OpenAPI document (openapi.ts)
 * and for the tests, which parse live answers with them. Objects are not
 * strict: a newer server may add fields.
 */

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const Index = z.number().int().min(0);
const Instant = z.string().describe('RFC 3339 instant');

/** `{error:{code,message,retryable}}`: every failure. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.enum([...KNOWN_CODES] as [string, ...string[]]), message: z.string(), retryable: z.boolean() }),
});

/** `POST /v1/statements` 202. */
export const AcceptedSchema = z.object({
  id: z.string().describe('the statement id (UUIDv7)'),
  statementHash: Hex64,
  partition: Index,
  status: z.string().describe('where to ask what became of it: /v1/statements/{id}'),
});

/** `GET /v1/statements/{id}`. */
export const StatementStatusSchema = z.object({
  id: z.string(),
  status: z.enum(['pending', 'admitted', 'rejected', 'refused']),
  acceptedAt: Instant.optional(),
  partition: Index.optional(),
  index: Index.optional(),
  code: z.string().optional().describe('rejected or refused: the reason code'),
  detail: z.string().optional(),
});

/** `GET /v1/decisions/{proposal}`: 200 with the decision and its signed entry, or 202 with `decision: null`. */
export const DecisionAnswerSchema = z.object({
  proposal: Hex64,
  decision: EnforcementRecordSchema.nullable(),
  entry: EntrySchema.optional().describe('the signed decision.recorded entry, to verify rather than trust'),
});

/** One open confirmation request. */
export const PendingRowSchema = z.object({
  requestHash: Hex64,
  proposalHash: Hex64,
  agentId: z.string(),
  tier: z.number().int(),
  deadline: Instant,
  approvalsRequired: z.number().int(),
  approvedBy: z.array(z.string()),
  status: z.enum(['pending', 'approved', 'denied', 'timed_out']),
  answeredBy: z.string().nullable(),
  answeredIndex: Index.nullable(),
  partition: Index,
  index: Index,
});

/** `GET /v1/pending`. */
export const PendingListSchema = z.object({ pending: z.array(PendingRowSchema) });

/** `GET /v1/proposals/{hash}`. */
export const ProposalDetailSchema = z.object({
  proposalHash: Hex64,
  tier: z.number().int().nullable(),
  risk: z.number().nullable(),
  status: z.string(),
  entry: EntrySchema.describe('the signed proposal.submitted entry'),
  request: EntrySchema.nullable().describe('the newest confirmation.requested entry about it'),
});

/** `GET /v1/grants`. */
export const GrantListSchema = z.object({ grants: z.array(GrantSchema) });

/** `GET /v1/refusals/metrics`. */
export const RefusalMetricsSchema = z.object({ metrics: z.array(z.object({ minute: Instant, code: z.string(), count: z.number().int().min(0) })) });

/** `GET /v1/enforcement`. */
export const EnforcementListSchema = z.object({ records: z.array(EnforcementRecordSchema) });

/** `GET /v1/checkpoints/latest`. */
export const CheckpointSchema = z.object({ partition: Index, size: Index, note: z.string().describe('C2SP signed note') });

/** `GET /v1/receipts/{partition}/{index}` (SPEC.md section 10). */
export const ReceiptSchema = z.object({
  v: z.literal(1),
  entry: EntrySchema,
  inclusionProof: z.array(z.string()).describe('base64 RFC 9162 inclusion path'),
  checkpoint: z.string().describe('the covering C2SP signed note'),
  genesis: z.unknown(),
});

/** `GET /v1/consistency`. */
export const ConsistencySchema = z.object({ partition: Index, from: Index, to: Index, proof: z.array(z.string()).describe('base64 RFC 9162 consistency path') });

/** `GET /healthz`. */
export const HealthSchema = z.object({ ok: z.boolean(), detail: z.record(z.string(), z.unknown()) });

/** `GET /v1/installation`: the id every signed read names (`aud`). */
export const InstallationSchema = z.object({
  installation: z.string().regex(/^[0-9a-f]{64}$/).describe("the statement hash of the installation's genesis"),
  origin: z.string(),
});

/** `GET /readyz` 200. */
export const ReadySchema = z.object({
  ready: z.boolean(),
  origin: z.string().optional(),
  rootKeys: z.array(z.string()).optional(),
  /** How reads are authenticated: `signed`, or `open` (anyone who reaches the port reads everything). */
  readAuth: z.enum(['signed', 'open']).optional(),
  checks: z.record(z.string(), z.object({ up: z.boolean(), error: z.string().optional() })),
  pendingStatements: z.number().int().optional(),
});
