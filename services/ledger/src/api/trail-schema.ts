import { z } from 'zod';

/**
 * The wire form of the paper-trail routes (`GET /v1/grants/:grantId/trail`,
 * `GET /v1/decisions/:proposal/trail`): the store's rows as JSON. One source
 * for the OpenAPI document and for the CLI, which checks an answer against it
 * before reading it (an API answer is untrusted input). Objects are not
 * strict: a newer server may add fields.
 */

const Index = z.number().int().min(0);
const Instant = z.string();
const Outcome = z.enum(['allow', 'verify_first', 'block', 'deny']);

/** A row of the grant table. */
export const GrantSchema = z.object({
  grantId: z.string(),
  agentId: z.string(),
  actionType: z.string(),
  targetResource: z.string(),
  recipient: z.string(),
  scope: z.string(),
  notBefore: Instant,
  expiresAt: Instant,
  effect: z.enum(['allow', 'block']),
  tier: z.number().int(),
  parentGrantId: z.string().nullable(),
  constraints: z.array(z.record(z.string(), z.unknown())).nullable().optional().describe('argument constraints signed in the grant, or null'),
  proposalHash: z.string(),
  proposedBy: z.string(),
  proposedAt: Index,
  cosignedBy: z.string().nullable().describe('the co-signer whose signature completed the quorum'),
  cosignedAt: Index.nullable(),
  status: z.enum(['proposed', 'active', 'revoked']),
  revokedAt: Index.nullable(),
  revokedVia: z.string().nullable().describe('the grant whose revocation ended it: itself or an ancestor'),
  reauthorizedExpiresAt: Instant.nullable(),
  reauthorizedAt: Index.nullable(),
});

/** One event of a grant's trail. */
export const GrantEventSchema = z.object({
  authorityIndex: Index,
  grantId: z.string(),
  kind: z.enum(['proposed', 'cosigned', 'reauthorized', 'revoked', 'revoked_via_ancestor']),
  principal: z.string(),
  keyId: z.string(),
  statementHash: z.string(),
  namesHash: z.string().nullable().describe('cosigned: the write co-signed; reauthorized: the proposal'),
  namesIndex: Index.nullable(),
  expiresAt: Instant.nullable(),
  cosignersNeeded: z.number().int().nullable(),
  cosignDeadline: Instant.nullable(),
  cosignedBy: z.array(z.string()),
  tookEffect: z.boolean(),
  effectiveAt: Index.nullable(),
  revokedVia: z.string().nullable(),
  reason: z.string().nullable(),
  sequencedAt: Instant,
});

/** An enforcement record: one decision. */
export const EnforcementRecordSchema = z.object({
  decisionHash: z.string(),
  proposalHash: z.string(),
  agentId: z.string(),
  outcome: Outcome,
  code: z.string().nullable(),
  tier: z.number().int(),
  risk: z.number(),
  authorityIndex: Index,
  grantId: z.string().nullable(),
  grantEntry: Index.nullable(),
  partition: Index,
  index: Index,
  sequencedAt: Instant,
});

/** A grant with its events in ledger order. */
export const GrantSummarySchema = z.object({ grant: GrantSchema, events: z.array(GrantEventSchema) });

/** `GET /v1/grants/:grantId/trail`. */
export const GrantTrailSchema = GrantSummarySchema.extend({
  parents: z.array(GrantSummarySchema).describe('the parent grant, its parent, up to the root grant'),
  derived: z.array(z.string()).describe('ids of every grant derived from it, directly or not, in ledger order'),
  decisions: z.object({
    total: z.number().int().min(0),
    byOutcome: z.partialRecord(Outcome, z.number().int().min(0)),
    records: z.array(EnforcementRecordSchema).describe('oldest first, at most `limit`'),
  }),
});

/** `GET /v1/decisions/:proposal/trail`. */
export const DecisionTrailSchema = z.object({
  proposal: z.string(),
  decision: EnforcementRecordSchema,
  chain: z.array(GrantSummarySchema).describe('the cited grant, its parent, up to the root grant; empty when no grant was cited'),
});

/** A grant trail as the API sends it. */
export type GrantTrailBody = z.infer<typeof GrantTrailSchema>;
/** A decision trail as the API sends it. */
export type DecisionTrailBody = z.infer<typeof DecisionTrailSchema>;
/** A grant with its events, as the API sends it. */
export type GrantSummaryBody = z.infer<typeof GrantSummarySchema>;
