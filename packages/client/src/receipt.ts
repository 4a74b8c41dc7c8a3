import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  checkCheckpointSigners,
  checkpointVerifiers,
  EntrySchema,
  EnvelopeSchema,
  canonicalJson,
  entryHash,
  envelopeHash,
  eventPartitionOf,
  fromBase64,
  fromHex,
  headerOf,
  nodeEd25519,
  openNote,
  parseCheckpoint,
  partitionOrigin,
  statementHash,
  verifyEnvelopeSignatures,
  verifyInclusion,
  type BodyOf,
  type Checkpoint,
  type Ed25519Backend,
  type Entry,
  type Envelope,
  type NoteVerifier,
} from '@agent-ledger/core';
import { keyValidAt, ledgerSettings, type PinnedKey, type Trust } from './trust.js';

/**
 * A receipt (SPEC.md section 10): one entry, its RFC 9162 inclusion proof,
 * the signed checkpoint the proof leads to, and the genesis of the log.
 */
export const ReceiptSchema = z.strictObject({
  v: z.literal(1),
  entry: EntrySchema,
  inclusionProof: z.array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/)).max(64),
  checkpoint: z.string().min(1).max(65536),
  genesis: EnvelopeSchema,
});

/** A receipt as it travels (checked by {@link verifyReceipt}, never trusted before). */
export interface Receipt {
  readonly v: 1;
  readonly entry: Entry;
  readonly inclusionProof: readonly string[];
  readonly checkpoint: string;
  readonly genesis: Envelope;
}

/** What a receipt proves about a decision once verified. */
export interface ReceiptDecision {
  readonly outcome: 'allow' | 'verify_first' | 'block' | 'deny';
  readonly code: ReasonCode | null;
  readonly proposal: string;
  readonly agentId: string;
  /** The decision's log position. */
  readonly partition: number;
  readonly index: number;
  readonly entryHash: string;
  readonly sequencedAt: string;
  /** The key that signed the decision (a gate key valid at the entry's authority index). */
  readonly signer: string;
  /** The size of the signed checkpoint the inclusion proof leads to. */
  readonly checkpointSize: number;
}

/** The verdict on a receipt: a verified decision, or the refusal's code and why (and the position the receipt claims, if any). */
export type ReceiptVerdict =
  | { readonly ok: true; readonly decision: ReceiptDecision }
  | { readonly ok: false; readonly code: ReasonCode; readonly detail: string; readonly position: { readonly partition: number; readonly index: number } | null };

/** Options of {@link verifyReceipt}. */
export interface VerifyReceiptOptions {
  /** The hash of the proposal the executor is about to run: the decision must name it. */
  readonly proposalHash: string;
  /** The agent the decision must be about (the executor's own principal), when known. */
  readonly agentId?: string;
  /** Oldest decision accepted, in ms before `now` (default: the ledger's freshness window from genesis). */
  readonly maxAgeMs?: number;
  /** The time to judge freshness at (ms since the epoch; default now). */
  readonly now?: number;
  readonly ed25519?: Ed25519Backend;
}

interface Step {
  readonly receipt: Receipt;
  readonly trust: Trust;
  readonly options: VerifyReceiptOptions;
  readonly ed25519: Ed25519Backend;
  checkpoint?: Checkpoint;
  signer?: PinnedKey;
}

function refuse(code: ReasonCode, detail: string): never {
  throw new LedgerError(code, detail);
}

/** 1. The receipt is of the pinned log: its genesis is the pinned genesis. */
function sameLog(step: Step): void {
  if (statementHash(step.receipt.genesis.statement) !== statementHash(step.trust.genesis.statement)) {
    refuse(ReasonCode.INTEGRITY_FAILURE, 'the receipt is of another log: its genesis is not the pinned one');
  }
}

/**
 * 5. The checkpoint is signed by a pinned sequencer key and is the entry's
 * partition's. SPEC.md section 6: the key holds the sequencer role at the
 * authority index of the checkpoint's last entry, which is at least the
 * entry's own: a key revoked before the entry's index cannot have signed it.
 */
function signedCheckpoint(step: Step): void {
  const { entry } = step.receipt;
  const { origin, authorityRulesVersion } = ledgerSettings(step.trust);
  const verifiers: NoteVerifier[] = checkpointVerifiers(
    origin,
    entry.partition,
    step.trust.keys.filter((k) => k.roles.includes('sequencer') && (k.revokedAt === null || k.revokedAt >= entry.authorityIndex)).map((k) => fromHex(k.keyId, 32)),
    (pk, message, sig) => step.ed25519.verify(pk, message, sig),
  );
  let checkpoint: Checkpoint;
  try {
    const opened = openNote(step.receipt.checkpoint, verifiers);
    checkCheckpointSigners(opened, origin, entry.partition, authorityRulesVersion);
    checkpoint = parseCheckpoint(opened.text);
  } catch (err) {
    if (err instanceof LedgerError) refuse(ReasonCode.CHECKPOINT_INVALID, `checkpoint: ${err.message}`);
    throw err;
  }
  if (checkpoint.origin !== partitionOrigin(origin, entry.partition)) {
    refuse(ReasonCode.CHECKPOINT_INVALID, `the checkpoint is of ${checkpoint.origin}, not of partition ${entry.partition} of ${origin}`);
  }
  if (checkpoint.size <= entry.index) refuse(ReasonCode.CHECKPOINT_INVALID, `the checkpoint of size ${checkpoint.size} does not cover entry ${entry.index}`);
  step.checkpoint = checkpoint;
}

/** 2. The entry's signature holds and its hash is its content's. */
function entryIntact(step: Step): void {
  const { entry } = step.receipt;
  const canonical = canonicalJson(entry.envelope.statement);
  const signers = verifyEnvelopeSignatures(entry.envelope, canonical, step.ed25519);
  if (signers.length !== 1 || signers[0] !== entry.envelope.statement.author.keyId) {
    refuse(ReasonCode.INVALID_SIGNATURE, 'the decision must carry exactly one signature, by its author key');
  }
  if (entryHash(headerOf(entry, envelopeHash(entry.envelope, canonical))) !== entry.hash) {
    refuse(ReasonCode.INTEGRITY_FAILURE, 'the entry hash does not match its content');
  }
}

/** 6. RFC 9162 section 2.1.3.2: the inclusion proof leads from the entry hash to the signed root. */
function included(step: Step): void {
  const { entry, inclusionProof } = step.receipt;
  const checkpoint = step.checkpoint as Checkpoint;
  if (inclusionProof.length > 64) refuse(ReasonCode.INTEGRITY_FAILURE, 'the inclusion proof is longer than any tree needs');
  const proof = inclusionProof.map((p) => fromBase64(p, 32));
  if (!verifyInclusion(fromHex(entry.hash, 32), entry.index, checkpoint.size, proof, checkpoint.rootHash)) {
    refuse(ReasonCode.INTEGRITY_FAILURE, `the inclusion proof of entry ${entry.partition}/${entry.index} does not lead to the checkpoint root of size ${checkpoint.size}`);
  }
}

/** 3. The signer held the decision role (gate; service under authority rules 1) at the entry's authority index (SPEC.md section 7). */
function decidedByGate(step: Step): void {
  const { entry } = step.receipt;
  const statement = entry.envelope.statement;
  if (statement.type !== 'decision.recorded') refuse(ReasonCode.INTEGRITY_FAILURE, `the receipt is for a ${statement.type}, not a decision`);
  const role = ledgerSettings(step.trust).authorityRulesVersion >= 2 ? 'gate' : 'service';
  const key = step.trust.keys.find((k) => k.keyId === statement.author.keyId);
  const at = entry.authorityIndex;
  if (key === undefined) {
    refuse(ReasonCode.KEY_UNKNOWN, at > step.trust.authoritySize
      ? `the decision's key is not in the pinned trust (authority size ${step.trust.authoritySize}, the decision's ${at}): refresh the pinned trust`
      : `the decision is signed by key ${statement.author.keyId.slice(0, 16)}, which the pinned trust does not know`);
  }
  if (!key.roles.includes(role)) refuse(ReasonCode.KEY_ROLE, `the decision is signed by a key without the ${role} role (${key.principal})`);
  if (key.principal !== statement.author.principal) refuse(ReasonCode.KEY_ROLE, `the decision's key is registered to ${key.principal}, not ${statement.author.principal}`);
  if (key.registeredAt >= at) refuse(ReasonCode.KEY_UNKNOWN, `the decision's key was registered at authority index ${key.registeredAt}, not before ${at}`);
  if (!keyValidAt(key, at)) refuse(ReasonCode.KEY_REVOKED, `the decision's key was revoked at authority index ${String(key.revokedAt)}, before ${at}`);
  step.signer = key;
}

/** 4. The decision is about THIS proposal, of this agent, on the agent's partition. */
function boundToProposal(step: Step): void {
  const { entry } = step.receipt;
  const body = entry.envelope.statement.body as BodyOf<'decision.recorded'>;
  if (body.proposal !== step.options.proposalHash) refuse(ReasonCode.INTEGRITY_FAILURE, `the decision is about proposal ${body.proposal.slice(0, 16)}, not ${step.options.proposalHash.slice(0, 16)}`);
  if (step.options.agentId !== undefined && body.agentId !== step.options.agentId) refuse(ReasonCode.INTEGRITY_FAILURE, `the decision is about ${body.agentId}, not ${step.options.agentId}`);
  const expected = eventPartitionOf(body.agentId, ledgerSettings(step.trust).eventPartitions);
  if (entry.partition !== expected) refuse(ReasonCode.INTEGRITY_FAILURE, `a decision about ${body.agentId} belongs on partition ${expected}, not ${entry.partition}`);
}

/** 7. The decision is fresh: sequenced within `maxAgeMs` of now (a stale decision is a replay). */
function fresh(step: Step): void {
  const sequencedAt = Date.parse(step.receipt.entry.sequencedAt);
  const now = step.options.now ?? Date.now();
  const maxAgeMs = step.options.maxAgeMs ?? ledgerSettings(step.trust).freshnessMs;
  if (now - sequencedAt > maxAgeMs) refuse(ReasonCode.REPLAY, `the decision was sequenced ${Math.round((now - sequencedAt) / 1000)} s ago, more than ${Math.round(maxAgeMs / 1000)} s`);
  if (sequencedAt - now > maxAgeMs) refuse(ReasonCode.REPLAY, 'the decision is sequenced in the future beyond the freshness window');
}

/** The checks, in order. */
const STEPS: readonly ((step: Step) => void)[] = [sameLog, entryIntact, decidedByGate, boundToProposal, signedCheckpoint, included, fresh];

/**
 * Verifies a decision's receipt offline against a pinned trust document,
 * in this order: the log is the pinned one; the entry's signature and hash
 * hold; the decision's key held the gate role at the entry's authority
 * index; the decision names THIS proposal (and agent, and the agent's
 * partition); the checkpoint is signed by a pinned sequencer key for the
 * entry's partition; the inclusion proof leads to the signed root; the
 * decision is fresh.
 * Fails closed: anything that does not check is `ok: false` with its
 * refusal code. Never throws for bad content.
 */
export function verifyReceipt(receipt: unknown, trust: Trust, options: VerifyReceiptOptions): ReceiptVerdict {
  let position: { partition: number; index: number } | null = null;
  try {
    const parsed = ReceiptSchema.safeParse(receipt);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      refuse(ReasonCode.SCHEMA_INVALID, `receipt: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
    }
    const checked = parsed.data as unknown as Receipt;
    position = { partition: checked.entry.partition, index: checked.entry.index };
    const step: Step = { receipt: checked, trust, options, ed25519: options.ed25519 ?? nodeEd25519 };
    for (const check of STEPS) check(step);
    const body = checked.entry.envelope.statement.body as BodyOf<'decision.recorded'>;
    return {
      ok: true,
      decision: {
        outcome: body.outcome,
        code: body.code,
        proposal: body.proposal,
        agentId: body.agentId,
        partition: checked.entry.partition,
        index: checked.entry.index,
        entryHash: checked.entry.hash,
        sequencedAt: checked.entry.sequencedAt,
        signer: (step.signer as PinnedKey).keyId,
        checkpointSize: (step.checkpoint as Checkpoint).size,
      },
    };
  } catch (err) {
    if (err instanceof LedgerError) return { ok: false, code: err.code, detail: err.message, position };
    throw err;
  }
}
