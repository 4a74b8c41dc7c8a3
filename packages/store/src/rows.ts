import { canonicalJson } from '@agent-ledger/core';

/**
 * Row shapes of the projection tables and their column mapping. Values are
 * kept in ledger form (ISO timestamps, numbers for indexes), so a row folded
 * in memory and a row read back from Postgres compare equal.
 */

/** `entries_seen`: one row per applied entry. */
export interface EntrySeenRow {
  readonly partition: number;
  readonly index: number;
  readonly hash: string;
  readonly statementHash: string;
  readonly type: string;
  readonly sequencedAt: string;
  readonly authorityIndex: number;
  /** The statement's id (null on rows applied before migration 005). */
  readonly statementId: string | null;
  /** The statement's author principal (null on rows applied before migration 007). */
  readonly author: string | null;
}

/** `keys`: the key registry. */
export interface KeyRow {
  readonly keyId: string;
  readonly principal: string;
  readonly roles: readonly string[];
  readonly registeredAt: number;
  revokedAt: number | null;
}

/** Lifecycle of a grant. */
export type GrantStatus = 'proposed' | 'active' | 'revoked';

/** `grants`. */
export interface GrantRow {
  readonly grantId: string;
  readonly agentId: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly notBefore: string;
  readonly expiresAt: string;
  readonly effect: 'allow' | 'block';
  readonly tier: number;
  readonly parentGrantId: string | null;
  /** The argument constraints signed in the grant (SPEC.md section 7.2, rule 7), or null for none. Stored as canonical JSON text. */
  readonly constraints: readonly Readonly<Record<string, unknown>>[] | null;
  /** Statement hash of the grant.proposed: what a cosignature names. */
  readonly proposalHash: string;
  readonly proposedBy: string;
  /** Authority index of the grant.proposed entry. */
  readonly proposedAt: number;
  /** The co-signer whose signature completed the proposal's quorum (made it active), or null. */
  cosignedBy: string | null;
  /** Authority index of that co-signature. */
  cosignedAt: number | null;
  status: GrantStatus;
  /** Authority index of the revocation that ended it: its own, or an ancestor's. */
  revokedAt: number | null;
  /** The grant whose revocation ended it: itself, or the ancestor that was revoked. */
  revokedVia: string | null;
  /** End of the window set by the latest re-authorisation that took effect (co-signed), or null. */
  reauthorizedExpiresAt: string | null;
  /** Authority index at which that re-authorisation took effect (its completing co-signature). */
  reauthorizedAt: number | null;
}

/**
 * What a `grant_events` row records: a grant statement (`proposed`,
 * `cosigned`, `reauthorized`, `revoked`), or the end of a derived grant
 * through the revocation of an ancestor (`revoked_via_ancestor`).
 */
export type GrantEventKind = 'proposed' | 'cosigned' | 'reauthorized' | 'revoked' | 'revoked_via_ancestor';

/**
 * `grant_events`: the paper trail of the grant table, one row per grant
 * statement that the grant rules accepted, plus one per grant that an
 * ancestor's revocation ended. A proposal and a re-authorisation are
 * "writes" that wait for co-signatures: their rows carry the quorum, the
 * deadline, the co-signers so far and whether (and where) they took effect.
 */
export interface GrantEventRow {
  readonly authorityIndex: number;
  readonly grantId: string;
  readonly kind: GrantEventKind;
  /** Author of the statement (for `revoked_via_ancestor`, of the ancestor's revocation). */
  readonly principal: string;
  readonly keyId: string;
  readonly statementHash: string;
  /** `cosigned`: the write it co-signs; `reauthorized`: the grant's proposal. */
  readonly namesHash: string | null;
  /** Authority index of the statement `namesHash` names. */
  readonly namesIndex: number | null;
  /** `proposed`: end of the window; `reauthorized`: the new end it asks for. */
  readonly expiresAt: string | null;
  /** Writes: co-signatures needed (genesis grant policy, by tier). */
  readonly cosignersNeeded: number | null;
  /** Writes: latest sequencing time at which a co-signature counts. */
  readonly cosignDeadline: string | null;
  /** Writes: principals that co-signed it, in ledger order. Empty for other kinds. */
  cosignedBy: string[];
  /** Writes: the quorum was reached; `cosigned`: this co-signature reached it; revocations: always. */
  tookEffect: boolean;
  /** Authority index at which it took effect, or null. */
  effectiveAt: number | null;
  /** Revocations: the grant whose revocation this is (the grant itself, or its revoked ancestor). */
  readonly revokedVia: string | null;
  /** Revocations: the reason the revocation gives. */
  readonly reason: string | null;
  readonly sequencedAt: string;
}

/** `grant_policy`: the grant rules genesis fixed (or the defaults when it named none), for a restarted fold. */
export interface GrantPolicyRow {
  /** Authority index of the genesis entry. */
  readonly authorityIndex: number;
  /** False when genesis named no `grantPolicy` and the defaults apply. */
  readonly fromGenesis: boolean;
  /** Co-signatures needed per tier 0-4. */
  readonly cosigners: readonly number[];
  /** Longest allow-grant life per tier 0-4, ms. */
  readonly maxLifetimeMs: readonly number[];
  readonly cosignWindowMs: number;
}

/** Status of a proposal: `submitted`, or the outcome of its latest decision. */
export type ProposalStatus = 'submitted' | 'allow' | 'verify_first' | 'block' | 'deny';

/** `proposals`. */
export interface ProposalRow {
  readonly proposalHash: string;
  readonly agentId: string;
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
  tier: number | null;
  risk: number | null;
  screening: string | null;
  status: ProposalStatus;
}

/** Status of a confirmation request. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'timed_out';

/** `pending_approvals`: one row per confirmation.requested. */
export interface ApprovalRow {
  /** Statement hash of the confirmation.requested: what a human response names. */
  readonly requestHash: string;
  readonly proposalHash: string;
  readonly agentId: string;
  readonly tier: number;
  readonly deadline: string;
  readonly approvalsRequired: number;
  approvedBy: string[];
  status: ApprovalStatus;
  answeredBy: string | null;
  answeredIndex: number | null;
  readonly partition: number;
  readonly index: number;
}

/** A decision outcome. */
export type DecisionOutcome = 'allow' | 'verify_first' | 'block' | 'deny';

/** `enforcement_records`: one row per decision.recorded. */
export interface EnforcementRow {
  readonly decisionHash: string;
  readonly proposalHash: string;
  readonly agentId: string;
  readonly outcome: DecisionOutcome;
  readonly code: string | null;
  readonly tier: number;
  readonly risk: number;
  readonly authorityIndex: number;
  readonly grantId: string | null;
  readonly grantEntry: number | null;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
}

/** `refusals`: refusal.recorded (with a proposal) and intake.rejected (with an input hash). */
export interface RefusalRow {
  readonly statementHash: string;
  readonly agentId: string;
  readonly proposalHash: string | null;
  readonly inputHash: string | null;
  readonly code: string;
  readonly refusal: string;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
}

/** `refusal_metrics`: a count to add to one (minute, code) bucket. */
export interface RefusalCountRow {
  readonly minute: string;
  readonly code: string;
  count: number;
}

type Scalar = string | number | boolean | null | readonly string[];

/** One column: its name, its Postgres type and how a row gives its value. */
export interface Column<R> {
  readonly name: string;
  readonly sqlType: string;
  readonly value: (row: R) => Scalar;
}

/** A projection table: name, primary key columns, columns, and how to read a stored row. */
export interface TableSpec<R> {
  readonly table: string;
  readonly key: readonly string[];
  readonly columns: readonly Column<R>[];
  readonly read: (stored: Record<string, unknown>) => R;
}

function column<R>(name: string, sqlType: string, value: (row: R) => Scalar): Column<R> {
  return { name, sqlType, value };
}

/** A stored timestamptz as a ledger timestamp. */
function iso(value: unknown): string {
  return (value as Date).toISOString();
}

function isoOrNull(value: unknown): string | null {
  return value === null ? null : iso(value);
}

/** A stored bigint (node-postgres returns int8 as a string) as a number; indexes stay below 2^53. */
function num(value: unknown): number {
  return Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null ? null : Number(value);
}

function str(value: unknown): string {
  return value as string;
}

function strOrNull(value: unknown): string | null {
  return value === null ? null : (value as string);
}

/** `entries_seen`, keyed by ledger position. */
export const ENTRIES_SEEN: TableSpec<EntrySeenRow> = {
  table: 'entries_seen',
  key: ['partition', 'index'],
  columns: [
    column('partition', 'integer', (r) => r.partition),
    column('index', 'bigint', (r) => r.index),
    column('hash', 'text', (r) => r.hash),
    column('statement_hash', 'text', (r) => r.statementHash),
    column('type', 'text', (r) => r.type),
    column('sequenced_at', 'timestamptz', (r) => r.sequencedAt),
    column('authority_index', 'bigint', (r) => r.authorityIndex),
    column('statement_id', 'text', (r) => r.statementId),
    column('author', 'text', (r) => r.author),
  ],
  read: (s) => ({
    partition: num(s['partition']),
    index: num(s['index']),
    hash: str(s['hash']),
    statementHash: str(s['statement_hash']),
    type: str(s['type']),
    sequencedAt: iso(s['sequenced_at']),
    authorityIndex: num(s['authority_index']),
    statementId: s['statement_id'] === null || s['statement_id'] === undefined ? null : str(s['statement_id']),
    author: s['author'] === null || s['author'] === undefined ? null : str(s['author']),
  }),
};

/** `keys`, keyed by key id. */
export const KEYS: TableSpec<KeyRow> = {
  table: 'keys',
  key: ['key_id'],
  columns: [
    column('key_id', 'text', (r) => r.keyId),
    column('principal', 'text', (r) => r.principal),
    column('roles', 'text[]', (r) => r.roles),
    column('registered_at', 'bigint', (r) => r.registeredAt),
    column('revoked_at', 'bigint', (r) => r.revokedAt),
  ],
  read: (s) => ({
    keyId: str(s['key_id']),
    principal: str(s['principal']),
    roles: s['roles'] as string[],
    registeredAt: num(s['registered_at']),
    revokedAt: numOrNull(s['revoked_at']),
  }),
};

/** `grants`, keyed by grant id. */
export const GRANTS: TableSpec<GrantRow> = {
  table: 'grants',
  key: ['grant_id'],
  columns: [
    column('grant_id', 'text', (r) => r.grantId),
    column('agent_id', 'text', (r) => r.agentId),
    column('action_type', 'text', (r) => r.actionType),
    column('target_resource', 'text', (r) => r.targetResource),
    column('recipient', 'text', (r) => r.recipient),
    column('scope', 'text', (r) => r.scope),
    column('not_before', 'timestamptz', (r) => r.notBefore),
    column('expires_at', 'timestamptz', (r) => r.expiresAt),
    column('effect', 'text', (r) => r.effect),
    column('tier', 'smallint', (r) => r.tier),
    column('parent_grant_id', 'text', (r) => r.parentGrantId),
    column('proposal_hash', 'text', (r) => r.proposalHash),
    column('proposed_by', 'text', (r) => r.proposedBy),
    column('proposed_at', 'bigint', (r) => r.proposedAt),
    column('cosigned_by', 'text', (r) => r.cosignedBy),
    column('cosigned_at', 'bigint', (r) => r.cosignedAt),
    column('status', 'text', (r) => r.status),
    column('revoked_at', 'bigint', (r) => r.revokedAt),
    column('reauthorized_expires_at', 'timestamptz', (r) => r.reauthorizedExpiresAt),
    column('reauthorized_at', 'bigint', (r) => r.reauthorizedAt),
    column('revoked_via', 'text', (r) => r.revokedVia),
    column('constraints', 'text', (r) => (r.constraints === null ? null : canonicalJson(r.constraints))),
  ],
  read: (s) => ({
    grantId: str(s['grant_id']),
    agentId: str(s['agent_id']),
    actionType: str(s['action_type']),
    targetResource: str(s['target_resource']),
    recipient: str(s['recipient']),
    scope: str(s['scope']),
    notBefore: iso(s['not_before']),
    expiresAt: iso(s['expires_at']),
    effect: s['effect'] as GrantRow['effect'],
    tier: num(s['tier']),
    parentGrantId: strOrNull(s['parent_grant_id']),
    constraints: s['constraints'] === null || s['constraints'] === undefined ? null : (JSON.parse(str(s['constraints'])) as GrantRow['constraints']),
    proposalHash: str(s['proposal_hash']),
    proposedBy: str(s['proposed_by']),
    proposedAt: num(s['proposed_at']),
    cosignedBy: strOrNull(s['cosigned_by']),
    cosignedAt: numOrNull(s['cosigned_at']),
    status: s['status'] as GrantStatus,
    revokedAt: numOrNull(s['revoked_at']),
    revokedVia: strOrNull(s['revoked_via']),
    reauthorizedExpiresAt: isoOrNull(s['reauthorized_expires_at']),
    reauthorizedAt: numOrNull(s['reauthorized_at']),
  }),
};

/** `grant_events`, keyed by (authority index, grant id): ledger order. */
export const GRANT_EVENTS: TableSpec<GrantEventRow> = {
  table: 'grant_events',
  key: ['authority_index', 'grant_id'],
  columns: [
    column('authority_index', 'bigint', (r) => r.authorityIndex),
    column('grant_id', 'text', (r) => r.grantId),
    column('kind', 'text', (r) => r.kind),
    column('principal', 'text', (r) => r.principal),
    column('key_id', 'text', (r) => r.keyId),
    column('statement_hash', 'text', (r) => r.statementHash),
    column('names_hash', 'text', (r) => r.namesHash),
    column('names_index', 'bigint', (r) => r.namesIndex),
    column('expires_at', 'timestamptz', (r) => r.expiresAt),
    column('cosigners_needed', 'smallint', (r) => r.cosignersNeeded),
    column('cosign_deadline', 'timestamptz', (r) => r.cosignDeadline),
    column('cosigned_by', 'text[]', (r) => r.cosignedBy),
    column('took_effect', 'boolean', (r) => r.tookEffect),
    column('effective_at', 'bigint', (r) => r.effectiveAt),
    column('revoked_via', 'text', (r) => r.revokedVia),
    column('reason', 'text', (r) => r.reason),
    column('sequenced_at', 'timestamptz', (r) => r.sequencedAt),
  ],
  read: (s) => ({
    authorityIndex: num(s['authority_index']),
    grantId: str(s['grant_id']),
    kind: s['kind'] as GrantEventKind,
    principal: str(s['principal']),
    keyId: str(s['key_id']),
    statementHash: str(s['statement_hash']),
    namesHash: strOrNull(s['names_hash']),
    namesIndex: numOrNull(s['names_index']),
    expiresAt: isoOrNull(s['expires_at']),
    cosignersNeeded: numOrNull(s['cosigners_needed']),
    cosignDeadline: isoOrNull(s['cosign_deadline']),
    cosignedBy: s['cosigned_by'] as string[],
    tookEffect: s['took_effect'] as boolean,
    effectiveAt: numOrNull(s['effective_at']),
    revokedVia: strOrNull(s['revoked_via']),
    reason: strOrNull(s['reason']),
    sequencedAt: iso(s['sequenced_at']),
  }),
};

/** `grant_policy`, keyed by the genesis entry's authority index (one row). */
export const GRANT_POLICY: TableSpec<GrantPolicyRow> = {
  table: 'grant_policy',
  key: ['authority_index'],
  columns: [
    column('authority_index', 'bigint', (r) => r.authorityIndex),
    column('from_genesis', 'boolean', (r) => r.fromGenesis),
    column('cosigners', 'integer[]', (r) => r.cosigners.map(String)),
    column('max_lifetime_ms', 'bigint[]', (r) => r.maxLifetimeMs.map(String)),
    column('cosign_window_ms', 'bigint', (r) => r.cosignWindowMs),
  ],
  read: (s) => ({
    authorityIndex: num(s['authority_index']),
    fromGenesis: s['from_genesis'] as boolean,
    cosigners: (s['cosigners'] as unknown[]).map(num),
    maxLifetimeMs: (s['max_lifetime_ms'] as unknown[]).map(num),
    cosignWindowMs: num(s['cosign_window_ms']),
  }),
};

/** `proposals`, keyed by the proposal's statement hash. */
export const PROPOSALS: TableSpec<ProposalRow> = {
  table: 'proposals',
  key: ['proposal_hash'],
  columns: [
    column('proposal_hash', 'text', (r) => r.proposalHash),
    column('agent_id', 'text', (r) => r.agentId),
    column('tool', 'text', (r) => r.tool),
    column('action_type', 'text', (r) => r.actionType),
    column('target_resource', 'text', (r) => r.targetResource),
    column('recipient', 'text', (r) => r.recipient),
    column('scope', 'text', (r) => r.scope),
    column('partition', 'integer', (r) => r.partition),
    column('index', 'bigint', (r) => r.index),
    column('sequenced_at', 'timestamptz', (r) => r.sequencedAt),
    column('tier', 'smallint', (r) => r.tier),
    column('risk', 'double precision', (r) => r.risk),
    column('screening', 'text', (r) => r.screening),
    column('status', 'text', (r) => r.status),
  ],
  read: (s) => ({
    proposalHash: str(s['proposal_hash']),
    agentId: str(s['agent_id']),
    tool: str(s['tool']),
    actionType: str(s['action_type']),
    targetResource: str(s['target_resource']),
    recipient: str(s['recipient']),
    scope: str(s['scope']),
    partition: num(s['partition']),
    index: num(s['index']),
    sequencedAt: iso(s['sequenced_at']),
    tier: numOrNull(s['tier']),
    risk: numOrNull(s['risk']),
    screening: strOrNull(s['screening']),
    status: s['status'] as ProposalStatus,
  }),
};

/** `pending_approvals`, keyed by the confirmation request's statement hash. */
export const PENDING_APPROVALS: TableSpec<ApprovalRow> = {
  table: 'pending_approvals',
  key: ['request_hash'],
  columns: [
    column('request_hash', 'text', (r) => r.requestHash),
    column('proposal_hash', 'text', (r) => r.proposalHash),
    column('agent_id', 'text', (r) => r.agentId),
    column('tier', 'smallint', (r) => r.tier),
    column('deadline', 'timestamptz', (r) => r.deadline),
    column('approvals_required', 'smallint', (r) => r.approvalsRequired),
    column('approved_by', 'text[]', (r) => r.approvedBy),
    column('status', 'text', (r) => r.status),
    column('answered_by', 'text', (r) => r.answeredBy),
    column('answered_index', 'bigint', (r) => r.answeredIndex),
    column('partition', 'integer', (r) => r.partition),
    column('index', 'bigint', (r) => r.index),
  ],
  read: (s) => ({
    requestHash: str(s['request_hash']),
    proposalHash: str(s['proposal_hash']),
    agentId: str(s['agent_id']),
    tier: num(s['tier']),
    deadline: iso(s['deadline']),
    approvalsRequired: num(s['approvals_required']),
    approvedBy: s['approved_by'] as string[],
    status: s['status'] as ApprovalStatus,
    answeredBy: strOrNull(s['answered_by']),
    answeredIndex: numOrNull(s['answered_index']),
    partition: num(s['partition']),
    index: num(s['index']),
  }),
};

/** `enforcement_records`, keyed by the decision's statement hash. */
export const ENFORCEMENT_RECORDS: TableSpec<EnforcementRow> = {
  table: 'enforcement_records',
  key: ['decision_hash'],
  columns: [
    column('decision_hash', 'text', (r) => r.decisionHash),
    column('proposal_hash', 'text', (r) => r.proposalHash),
    column('agent_id', 'text', (r) => r.agentId),
    column('outcome', 'text', (r) => r.outcome),
    column('code', 'text', (r) => r.code),
    column('tier', 'smallint', (r) => r.tier),
    column('risk', 'double precision', (r) => r.risk),
    column('authority_index', 'bigint', (r) => r.authorityIndex),
    column('grant_id', 'text', (r) => r.grantId),
    column('grant_entry', 'bigint', (r) => r.grantEntry),
    column('partition', 'integer', (r) => r.partition),
    column('index', 'bigint', (r) => r.index),
    column('sequenced_at', 'timestamptz', (r) => r.sequencedAt),
  ],
  read: (s) => ({
    decisionHash: str(s['decision_hash']),
    proposalHash: str(s['proposal_hash']),
    agentId: str(s['agent_id']),
    outcome: s['outcome'] as DecisionOutcome,
    code: strOrNull(s['code']),
    tier: num(s['tier']),
    risk: num(s['risk']),
    authorityIndex: num(s['authority_index']),
    grantId: strOrNull(s['grant_id']),
    grantEntry: numOrNull(s['grant_entry']),
    partition: num(s['partition']),
    index: num(s['index']),
    sequencedAt: iso(s['sequenced_at']),
  }),
};

/** `refusals`, keyed by the refusing statement's hash. */
export const REFUSALS: TableSpec<RefusalRow> = {
  table: 'refusals',
  key: ['statement_hash'],
  columns: [
    column('statement_hash', 'text', (r) => r.statementHash),
    column('agent_id', 'text', (r) => r.agentId),
    column('proposal_hash', 'text', (r) => r.proposalHash),
    column('input_hash', 'text', (r) => r.inputHash),
    column('code', 'text', (r) => r.code),
    column('refusal', 'text', (r) => r.refusal),
    column('partition', 'integer', (r) => r.partition),
    column('index', 'bigint', (r) => r.index),
    column('sequenced_at', 'timestamptz', (r) => r.sequencedAt),
  ],
  read: (s) => ({
    statementHash: str(s['statement_hash']),
    agentId: str(s['agent_id']),
    proposalHash: strOrNull(s['proposal_hash']),
    inputHash: strOrNull(s['input_hash']),
    code: str(s['code']),
    refusal: str(s['refusal']),
    partition: num(s['partition']),
    index: num(s['index']),
    sequencedAt: iso(s['sequenced_at']),
  }),
};

/** `refusal_metrics`, keyed by minute and code. */
export const REFUSAL_METRICS: TableSpec<RefusalCountRow> = {
  table: 'refusal_metrics',
  key: ['minute', 'code'],
  columns: [
    column('minute', 'timestamptz', (r) => r.minute),
    column('code', 'text', (r) => r.code),
    column('count', 'bigint', (r) => r.count),
  ],
  read: (s) => ({ minute: iso(s['minute']), code: str(s['code']), count: num(s['count']) }),
};
