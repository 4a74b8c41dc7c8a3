import { z } from 'zod';
import { KNOWN_CODES, type ReasonCode } from '@agent-ledger/refusals';
import { ROLES, Role } from './roles.js';
import { AUTHORITY_RULES_VERSIONS } from './authority-rules.js';
import { ArgumentConstraintsSchema } from './grant-constraints.js';

// Every schema here is strict: an unknown field is refused, never ignored, so
// that no signed byte carries meaning the verifier did not check.

const MAX_TEXT = 4096;

/** 32 bytes as 64 lowercase hex characters (hashes). */
export const Hash = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters');
/** A key id: the raw 32-byte Ed25519 public key as 64 lowercase hex characters. */
export const KeyId = Hash;
/** 64-byte Ed25519 signature, standard padded base64 (88 characters). */
export const SignatureB64 = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'expected a 64-byte base64 signature');
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (s.charCodeAt(i) - 48);
  return n;
}

/**
 * True when a `YYYY-MM-DDTHH:MM:SS.mmmZ` string names a real instant (month
 * 1-12, a day that month has, hour < 24, minute and second < 60). Checked by
 * hand: it runs for every timestamp of every bundle line.
 */
function isRealInstant(s: string): boolean {
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  return day <= days && digits(s, 11, 13) < 24 && digits(s, 14, 16) < 60 && digits(s, 17, 19) < 60;
}

/** UTC timestamp with exactly millisecond precision, e.g. 2026-11-22T07:00:00.000Z. */
export const Timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'expected YYYY-MM-DDTHH:MM:SS.mmmZ')
  .refine(isRealInstant, 'not a real instant');
/** A principal: `kind:name`, e.g. `agent:billing-bot`, `admin:alice`. */
export const Principal = z.string().regex(/^[a-z][a-z0-9-]{0,31}:[A-Za-z0-9._@-]{1,128}$/, 'expected kind:name');
/** A UUIDv7 (RFC 9562 section 5.7), lowercase. */
export const StatementId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'expected a lowercase UUIDv7');
const Text = z.string().max(MAX_TEXT);
const ShortText = z.string().min(1).max(256);
const Code = z.enum(KNOWN_CODES as [ReasonCode, ...ReasonCode[]]);
const Tier = z.number().int().min(0).max(4);
const Risk = z.number().min(0).max(1000);
const Index = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const RoleSchema = z.enum(ROLES);
/** A rules version number; whether it is released is checked by the replay, not the schema. */
const RulesVersionField = z.number().int().min(1).max(1_000_000);

/** Any JSON object (tool arguments, context): checked for JCS-safety by the strict parser. */
const JsonObject = z.record(z.string(), z.unknown());

const KeyGrant = z.strictObject({
  keyId: KeyId,
  principal: Principal,
  roles: z.array(RoleSchema).min(1).max(ROLES.length),
  /**
   * Authority rules 2: the risk threshold of an agent (SPEC.md section 7.3):
   * a call of tier 0-1 whose risk is below it is allowed without a human.
   * Only on an agent key; absent means the genesis `riskThreshold`.
   */
  riskThreshold: z.number().min(0).max(1000).optional(),
});

/** An authority rules version this build knows (authority-rules.ts); an unknown one is refused. */
const AuthorityRulesVersionField = z.union(AUTHORITY_RULES_VERSIONS.map((v) => z.literal(v)) as unknown as [z.ZodLiteral<1>, z.ZodLiteral<2>, z.ZodLiteral<3>]);

/** Body of each statement type, by type name. */
export const BODY_SCHEMAS = {
  genesis: z.strictObject({
    origin: z.string().regex(/^[A-Za-z0-9.-]+(\/[A-Za-z0-9._-]+)*$/).max(200),
    eventPartitions: z.number().int().min(1).max(1024),
    freshnessMs: z.number().int().min(1000).max(86_400_000),
    rootKeys: z.array(KeyId).min(1).max(32),
    rootThreshold: z.number().int().min(1).max(32),
    keys: z.array(KeyGrant).min(1).max(1000),
    /** Grant rules per tier 0-4 (SPEC.md section 7.2); absent means DEFAULT_GRANT_POLICY. */
    grantPolicy: z
      .strictObject({
        cosigners: z.array(z.number().int().min(1).max(16)).length(5),
        maxLifetimeMs: z.array(z.number().int().min(60_000).max(3_650 * 86_400_000)).length(5),
        cosignWindowMs: z.number().int().min(1000).max(30 * 86_400_000),
      })
      .optional(),
    /** The authority rules the ledger follows for its whole life (SPEC.md section 7.3); absent means 1. */
    authorityRulesVersion: AuthorityRulesVersionField.optional(),
    /** Authority rules 2: the risk threshold of an agent whose registration names none; absent means DEFAULT_RISK_THRESHOLD. */
    riskThreshold: z.number().min(0).max(1000).optional(),
  }),
  'key.registered': KeyGrant,
  /**
   * A new trust-root set, signed by a threshold of the current root keys AND
   * a threshold of the new ones (SPEC.md section 7.1). It may also revoke
   * keys and register new ones in the same breath: the recovery path when
   * admin keys are compromised.
   */
  'root.rotated': z.strictObject({
    rootKeys: z.array(KeyId).min(1).max(32),
    rootThreshold: z.number().int().min(1).max(32),
    revokeKeys: z.array(KeyId).max(64),
    registerKeys: z.array(KeyGrant).max(64),
    reason: ShortText,
  }),
  'key.revoked': z.strictObject({ keyId: KeyId, reason: ShortText }),
  'grant.proposed': z.strictObject({
    grantId: ShortText,
    agentId: Principal,
    actionType: ShortText,
    targetResource: ShortText,
    recipient: ShortText,
    scope: ShortText,
    notBefore: Timestamp,
    expiresAt: Timestamp,
    effect: z.enum(['allow', 'block']),
    tier: Tier,
    parentGrantId: ShortText.nullable(),
    /**
     * Authority rules 2: constraints on named argument paths (numeric
     * bounds, exact values, safe patterns) a call must meet for this allow
     * grant to cover it (SPEC.md section 7.2, rule 7); absent: any arguments.
     */
    constraints: ArgumentConstraintsSchema.optional(),
  }),
  'grant.cosigned': z.strictObject({ grantId: ShortText, grant: Hash }),
  'grant.revoked': z.strictObject({ grantId: ShortText, reason: ShortText }),
  'grant.reauthorized': z.strictObject({ grantId: ShortText, grant: Hash, expiresAt: Timestamp }),
  'proposal.submitted': z.strictObject({
    agentId: Principal,
    tool: ShortText,
    actionType: ShortText,
    targetResource: ShortText,
    recipient: ShortText,
    scope: ShortText,
    args: JsonObject,
    query: Text,
    labels: z.array(ShortText).max(64),
    channel: z.enum(['api', 'cli', 'telegram', 'discord', 'web']),
    context: JsonObject,
  }),
  'classification.recorded': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    tier: Tier,
    risk: Risk,
    rules: z.array(ShortText).max(256),
    /** The rules version that classified (packages/gate rules-version.ts); absent means 1. */
    rulesVersion: RulesVersionField.optional(),
  }),
  'screening.verdict': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    verdict: z.enum(['safe', 'uncertain', 'dangerous']),
    rationale: Text,
    model: ShortText,
    promptHash: Hash,
  }),
  'confirmation.requested': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    tier: Tier,
    deadline: Timestamp,
    approvalsRequired: z.number().int().min(1).max(16),
    channels: z.array(z.enum(['cli', 'web', 'telegram', 'discord', 'webhook'])).min(1).max(8),
  }),
  'human.response': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    request: Hash,
    answer: z.enum(['approve', 'deny']),
    assurance: z.enum(['self_signed', 'platform']),
    platformIdentity: ShortText.nullable(),
    /** Why the approver answered so (a denial's reason), signed with the answer; absent in answers made before it existed. */
    reason: ShortText.optional(),
  }),
  'timeout.recorded': z.strictObject({ agentId: Principal, proposal: Hash, request: Hash, deadline: Timestamp }),
  'escalation.raised': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    level: z.enum(['notify', 'admin', 'emergency']),
    reason: ShortText,
  }),
  'decision.recorded': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    outcome: z.enum(['allow', 'verify_first', 'block', 'deny']),
    code: Code.nullable(),
    tier: Tier,
    risk: Risk,
    authorityIndex: Index,
    grantId: ShortText.nullable(),
    grantEntry: Index.nullable(),
    /** The rules version that decided; verify-chain replays the decision with it. Absent means 1. */
    rulesVersion: RulesVersionField.optional(),
  }),
  'refusal.recorded': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    code: Code,
    refusal: z.string().startsWith('REFUSED: ').max(MAX_TEXT),
  }),
  'intake.rejected': z.strictObject({
    agentId: z.union([Principal, z.literal('unknown')]),
    code: Code,
    detail: Text,
    input: Hash,
  }),
  /**
   * The gate saw the same exact operation approved by humans several times and
   * suggests that an admin write a grant for it. Only a suggestion: it changes
   * no decision, and a grant still needs an admin's proposal and a second
   * admin's co-signature (never a silent whitelist).
   */
  'grant.suggested': z.strictObject({
    agentId: Principal,
    actionType: ShortText,
    targetResource: ShortText,
    recipient: ShortText,
    scope: ShortText,
    /** Highest tier among the approved confirmations. */
    tier: Tier,
    /** The approved `confirmation.requested` statements, by hash, in log order. */
    requests: z.array(Hash).min(1).max(64),
    notBefore: Timestamp,
    expiresAt: Timestamp,
  }),
  /**
   * A rubber-stamp signal: an approval sequenced sooner after the operation
   * could be read (its request, or the same approver's previous approval on
   * the partition) than the minimum reading time for its size. The approval
   * still counts; this records the signal.
   */
  'approval.rushed': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    request: Hash,
    response: Hash,
    approver: Principal,
    elapsedMs: Index,
    minReadMs: Index,
    operationBytes: Index,
  }),
  /**
   * One delivery of an escalation to people (or its failure), recorded by the
   * notify role: which channel it tried for which `escalation.raised`, and
   * whether the channel took it. A record, not a decision: it changes nothing.
   */
  'notification.sent': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    /** The `escalation.raised` statement, by hash. */
    escalation: Hash,
    level: z.enum(['notify', 'admin', 'emergency']),
    /** The channel tried; `none` when no channel was configured for the level. */
    channel: z.enum(['telegram', 'discord', 'cli', 'webhook', 'none']),
    ok: z.boolean(),
    /** `delivered`, or the failure's code and message. */
    detail: ShortText,
  }),
  /**
   * An executor (the agent's own hook, gateway or SDK guard) refused to run a
   * proposal because the decision it was handed did not verify: forged,
   * replayed, stale, signed by a key without the gate role, a proof that does
   * not lead to a signed checkpoint, a checkpoint of another log (SPEC.md
   * section 10.2). Signed by the agent's key. A record: it changes nothing.
   */
  'execution.refused': z.strictObject({
    agentId: Principal,
    proposal: Hash,
    code: Code,
    /** `formatRefusal(code, detail)`. */
    refusal: z.string().startsWith('REFUSED: ').max(MAX_TEXT),
    /** The decision's position and entry hash as the refused receipt claimed them (unverified), or null. */
    claimed: z.strictObject({ partition: Index, index: Index, hash: Hash }).nullable(),
    /** SHA-256 of the canonical JSON of the refused receipt, or null when there was none. */
    evidence: Hash.nullable(),
  }),
} as const;

/** The statement type names. */
export type StatementType = keyof typeof BODY_SCHEMAS;
/** Every statement type, in a fixed order. */
export const STATEMENT_TYPES = Object.keys(BODY_SCHEMAS) as [StatementType, ...StatementType[]];

/** Statement types carried on the authority stream (partition 0). */
export const AUTHORITY_TYPES: ReadonlySet<StatementType> = new Set<StatementType>([
  'genesis',
  'key.registered',
  'key.revoked',
  'root.rotated',
  'grant.proposed',
  'grant.cosigned',
  'grant.revoked',
  'grant.reauthorized',
]);

/**
 * The role the author's key must hold at the statement's ledger position.
 * `root` means: signed by trust-root keys, at least the root threshold.
 */
export const REQUIRED_ROLE: Readonly<Record<StatementType, Role | 'root'>> = {
  genesis: 'root',
  'key.registered': Role.admin,
  'key.revoked': Role.admin,
  'root.rotated': 'root',
  'grant.proposed': Role.admin,
  'grant.cosigned': Role.admin,
  'grant.revoked': Role.admin,
  'grant.reauthorized': Role.admin,
  'proposal.submitted': Role.agent,
  'classification.recorded': Role.service,
  'screening.verdict': Role.service,
  'confirmation.requested': Role.service,
  'human.response': Role.approver,
  'timeout.recorded': Role.service,
  'escalation.raised': Role.service,
  'decision.recorded': Role.service,
  'refusal.recorded': Role.service,
  'intake.rejected': Role.sequencer,
  'grant.suggested': Role.service,
  'approval.rushed': Role.service,
  // Signed by the notify role's chat bridge key (bridge:chat).
  'notification.sent': Role.approver,
  'execution.refused': Role.agent,
};

const Author = z.strictObject({ principal: Principal, keyId: KeyId });

function statementSchema<T extends StatementType>(type: T) {
  return z.strictObject({
    v: z.literal(1),
    id: StatementId,
    type: z.literal(type),
    issuedAt: Timestamp,
    author: Author,
    body: BODY_SCHEMAS[type],
  });
}

/** A statement of any type, discriminated by `type`. */
export const StatementSchema = z.discriminatedUnion(
  'type',
  STATEMENT_TYPES.map((t) => statementSchema(t)) as unknown as [
    ReturnType<typeof statementSchema<StatementType>>,
    ...ReturnType<typeof statementSchema<StatementType>>[],
  ],
);

/** A statement of type T, with its typed body. */
export interface Statement<T extends StatementType = StatementType> {
  readonly v: 1;
  readonly id: string;
  readonly type: T;
  readonly issuedAt: string;
  readonly author: { readonly principal: string; readonly keyId: string };
  readonly body: z.infer<(typeof BODY_SCHEMAS)[T]>;
}

/** One signature over a statement: the signer's key id and the base64 signature. */
export const SignatureSchema = z.strictObject({ keyId: KeyId, sig: SignatureB64 });

/** A signed statement as carried on the log: the statement and its signatures. */
export const EnvelopeSchema = z.strictObject({
  statement: StatementSchema,
  signatures: z.array(SignatureSchema).min(1).max(32),
});

/** A signed statement. */
export interface Envelope<T extends StatementType = StatementType> {
  readonly statement: Statement<T>;
  readonly signatures: readonly { readonly keyId: string; readonly sig: string }[];
}

/** Body type of statement type T. */
export type BodyOf<T extends StatementType> = z.infer<(typeof BODY_SCHEMAS)[T]>;

/**
 * Highest confirmation tier at which a `human.response` with assurance
 * `platform` (signed by a chat bridge on a chat platform's word, not by the
 * approver's own key) counts. Above it (tiers 3 high and 4 critical) such a
 * response is ignored: neither an approval nor a denial. One value for the
 * gate's confirmation queue, the projection, the chat bridge's default and the
 * offline replay in verify-chain (SPEC.md section 9, rule 14).
 */
export const MAX_PLATFORM_ASSURANCE_TIER = 2;
