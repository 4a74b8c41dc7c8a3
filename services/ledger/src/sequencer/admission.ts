import { ENTRY_LINE_OVERHEAD } from '@agent-ledger/rulebook';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  AuthorityState,
  EnvelopeSchema,
  Principal,
  ReplayWindow,
  canonicalJson,
  checkRouting,
  nodeEd25519,
  parseStrictJsonBytes,
  sha256Hex,
  verifyEnvelopeSignatures,
  type Envelope,
} from '@agent-ledger/core';
import type { SignatureVerdict } from './signature-pool.js';

/** An intake record the sequencer accepts, with its canonical statement text. */
export interface Admitted {
  readonly kind: 'admitted';
  readonly envelope: Envelope;
  readonly canonical: string;
}

/** An intake record the sequencer refuses: it becomes a signed `intake.rejected` entry. */
export interface Rejected {
  readonly kind: 'rejected';
  readonly code: ReasonCode;
  readonly detail: string;
  /** The agent the input claims to be about, when that much is readable. */
  readonly agentId: string;
  /** SHA-256 of the raw input bytes: what was refused, without storing it. */
  readonly input: string;
}

/** Size and depth bounds of one intake record. */
export const INTAKE_LIMITS = { maxBytes: 256 * 1024, maxDepth: 32 };

function claimedAgent(value: unknown): string {
  const body = (value as { statement?: { body?: { agentId?: unknown } } } | null)?.statement?.body;
  const agentId = body?.agentId;
  return typeof agentId === 'string' && Principal.safeParse(agentId).success ? agentId : 'unknown';
}

/** Whether a signature verdict stands for this envelope: a worker's, or one made here over exactly this statement by exactly these keys. */
function vouches(verdict: { readonly signers: readonly string[]; readonly canonical?: string }, envelope: Envelope, canonical: string): boolean {
  if (verdict.canonical === undefined) return true;
  return verdict.canonical === canonical && envelope.signatures.length === verdict.signers.length && envelope.signatures.every((s, i) => s.keyId === verdict.signers[i]);
}

/**
 * Admission of one intake record into ledger partition `partition`, judged
 * against the registry at authority index `authorityIndex` and the
 * partition's replay window, at sequencing time `nowMs`. The same rules the
 * offline verifier applies (SPEC.md section 9), so that what is admitted
 * verifies. Untrusted input: never throws; every refusal is a Rejected.
 *
 * `verdict`, when given, is the signature check of these exact bytes made
 * earlier on a worker thread ({@link SignaturePool}); without it the
 * signatures are checked here.
 *
 * On the authority partition an admitted statement is also applied to
 * `authority` (the caller's speculative state, discarded if the write fails).
 */
export function admit(
  raw: Uint8Array,
  partition: number,
  eventPartitions: number,
  authority: AuthorityState,
  authorityIndex: number,
  window: ReplayWindow | null,
  nowMs: number,
  verdict?: SignatureVerdict,
  /** The rulebook's one bound on undecided proposals (events partitions): may a proposal of this entry-line size join? */
  fitsWindow?: (lineBytes: number) => boolean,
): Admitted | Rejected {
  let value: unknown = null;
  try {
    value = parseStrictJsonBytes(raw, INTAKE_LIMITS);
    const parsed = EnvelopeSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid envelope'}`);
    }
    const envelope = parsed.data as unknown as Envelope;
    const statement = envelope.statement;
    const canonical = canonicalJson(statement);
    // A verdict computed on a worker thread from these same bytes stands in for the check.
    let signers: readonly string[];
    if (verdict === undefined || verdict === null) signers = verifyEnvelopeSignatures(envelope, canonical, nodeEd25519);
    else if ('signers' in verdict) signers = vouches(verdict, envelope, canonical) ? verdict.signers : verifyEnvelopeSignatures(envelope, canonical, nodeEd25519);
    else throw new LedgerError(verdict.code, verdict.message);
    const agentId = (statement.body as { agentId?: string }).agentId ?? null;
    checkRouting(statement.type, agentId, partition, eventPartitions);
    authority.authorize(statement, signers, authorityIndex);
    // Checked after the role, so that any other author gets the code verify-chain gives (KEY_ROLE);
    // the sequencer's own rejections are written by it, never taken from intake.
    if (statement.type === 'intake.rejected') {
      throw new LedgerError(ReasonCode.POLICY_VIOLATION, 'intake.rejected is written by the sequencer only');
    }
    if (statement.type === 'proposal.submitted' && fitsWindow !== undefined && !fitsWindow(Buffer.byteLength(JSON.stringify(envelope)) + ENTRY_LINE_OVERHEAD)) {
      throw new LedgerError(ReasonCode.RATE_LIMIT, 'too many undecided proposals on this partition: the replay window verify-chain holds is full');
    }
    // Genesis is signed offline by the root holders, possibly long before the
    // ledger starts: it is exempt from freshness, as in the verifier.
    if (statement.type !== 'genesis') {
      if (window === null) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the ledger has no genesis yet');
      window.admit(statement.id, Date.parse(statement.issuedAt), nowMs);
    }
    if (partition === 0) authority.apply(statement, authorityIndex, nowMs);
    return { kind: 'admitted', envelope, canonical };
  } catch (err) {
    if (!(err instanceof LedgerError)) throw err;
    return { kind: 'rejected', code: err.code, detail: err.message.slice(0, 300), agentId: claimedAgent(value), input: sha256Hex(raw) };
  }
}
