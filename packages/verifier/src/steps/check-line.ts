import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  AUTHORITY_TYPES,
  BundleLineSchema,
  BundleHeaderSchema,
  BundleEntrySchema,
  BundleCheckpointSchema,
  BundleTrailerSchema,
  canonicalJson,
  parseStrictJsonBytes,
  type Ed25519Backend,
  type Entry,
  type Statement,
} from '@agent-ledger/core';
import type { EntryResult, LineResult } from '../line-result.js';
import { entryHashOf, statementHashOf } from './entry-digests.js';
import { compileFastPath } from './schema-fast-path.js';
import { SignedMessages, verifySignatures } from './signed-messages.js';

/** Statement types whose full content the sequential fold needs (rejections may sit on the authority stream). */
const KEEP_STATEMENT: ReadonlySet<string> = new Set([...AUTHORITY_TYPES, 'intake.rejected']);

/**
 * Statement types that others name by statement hash: decisions and responses
 * name proposals and requests, co-signatures name grants, fatigue signals name
 * requests and responses.
 */
const KEEP_HASH: ReadonlySet<string> = new Set([...AUTHORITY_TYPES, 'proposal.submitted', 'confirmation.requested', 'human.response']);

/** Statement types whose bodies decision replay reads (rules 14 and 15). */
const KEEP_BODY: ReadonlySet<string> = new Set([
  'proposal.submitted',
  'screening.verdict',
  'decision.recorded',
  'confirmation.requested',
  'human.response',
  'timeout.recorded',
  'grant.suggested',
  'approval.rushed',
]);

const LINE_SCHEMAS = {
  header: BundleHeaderSchema,
  entry: BundleEntrySchema,
  checkpoint: BundleCheckpointSchema,
  trailer: BundleTrailerSchema,
} as const;

const BUNDLE_LINE_LIMITS = { maxBytes: 1 << 20, maxDepth: 32 };

/**
 * True for an entry line zod would accept and return unchanged: it is
 * checked as parsed, without zod rebuilding it. Every other line, and every
 * entry whose whole statement the fold keeps (those go on as zod's data,
 * exactly as before), is parsed by zod.
 */
const entryAcceptedAsParsed = compileFastPath(BundleEntrySchema);

/**
 * The position a broken line claims, when that much is readable: an entry's
 * partition and index, or for a line shaped like a checkpoint (it has a
 * `note`) its partition and index -1. Used only to report where it failed.
 */
function claimedPosition(value: unknown): { partition: number; index: number } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { partition, index, note } = value as { partition?: unknown; index?: unknown; note?: unknown };
  if (!Number.isSafeInteger(partition)) return null;
  if (typeof note === 'string' && index === undefined) return { partition: partition as number, index: -1 };
  // An entry's claimed index is never negative (-1 above marks a checkpoint).
  return Number.isSafeInteger(index) && (index as number) >= 0 ? { partition: partition as number, index: index as number } : null;
}

/**
 * An entry line checked in all but its signatures: the first half of
 * {@link checkLine}, whose second half, {@link completeLine}, verifies them.
 * A batch runs the first half over all its lines, then the second (see
 * {@link SignedMessages} for why).
 */
export interface UnverifiedEntry {
  readonly kind: 'unverified';
  /** The result, but for `signers`. */
  readonly result: { -readonly [K in keyof EntryResult]: EntryResult[K] };
  readonly signatures: Entry['envelope']['signatures'];
  /** Its signed message's number in the batch's {@link SignedMessages}. */
  readonly message: number;
  readonly claimed: { readonly partition: number; readonly index: number } | null;
}

/** The ErrorResult of a line whose check threw (a LedgerError keeps its code). */
export function lineError(line: number, err: unknown, claimed: { partition: number; index: number } | null): LineResult {
  const code = err instanceof LedgerError ? err.code : ReasonCode.SCHEMA_INVALID;
  const message = err instanceof Error ? err.message : 'unreadable line';
  return { kind: 'error', line, code, message, claimed };
}

/**
 * Step 1 of verification, first half: everything one line can prove alone
 * but its signatures. Strict JSON, the line schema, the statement's
 * canonical form (its signed message goes into `messages`), and the entry
 * hash recomputed. Untrusted input: never throws, every failure becomes an
 * ErrorResult.
 */
export function prepareLine(bytes: Uint8Array, line: number, messages: SignedMessages): LineResult | UnverifiedEntry {
  let raw: unknown = null;
  try {
    raw = parseStrictJsonBytes(bytes, BUNDLE_LINE_LIMITS);
    // Dispatch on `kind` by hand: one object schema is several times cheaper
    // than zod's discriminated union over the four line kinds.
    const kind = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as { kind?: unknown }).kind : undefined;
    if (kind === 'entry' && entryAcceptedAsParsed(raw) && !KEEP_STATEMENT.has((raw as Entry).envelope.statement.type)) {
      return prepareEntry(raw as Entry, line, bytes.length, messages);
    }
    const schema = typeof kind === 'string' && Object.hasOwn(LINE_SCHEMAS, kind) ? LINE_SCHEMAS[kind as keyof typeof LINE_SCHEMAS] : BundleLineSchema;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue === undefined ? '' : `${issue.path.join('.')}: `;
      return { kind: 'error', line, code: ReasonCode.SCHEMA_INVALID, message: `${where}${issue?.message ?? 'invalid line'}`, claimed: claimedPosition(raw) };
    }
    const value = parsed.data;
    switch (value.kind) {
      case 'header':
        return { kind: 'header', line, origin: value.origin, partitions: value.partitions };
      case 'checkpoint':
        return { kind: 'checkpoint', line, partition: value.partition, note: value.note };
      case 'trailer':
        return { kind: 'trailer', line, note: value.note };
      case 'entry':
        return prepareEntry(value as unknown as Entry, line, bytes.length, messages);
    }
  } catch (err) {
    return lineError(line, err, claimedPosition(raw));
  }
}

/**
 * Step 1, second half: verifies the signatures of an entry {@link prepareLine}
 * left unverified, against the key each names. Never throws.
 */
export function completeLine(prepared: LineResult | UnverifiedEntry, messages: SignedMessages, ed25519: Ed25519Backend): LineResult {
  if (prepared.kind !== 'unverified') return prepared;
  try {
    prepared.result.signers = verifySignatures(prepared.signatures, messages.message(prepared.message), ed25519);
    return prepared.result;
  } catch (err) {
    return lineError(prepared.result.line, err, prepared.claimed);
  }
}

/** Messages of {@link checkLine}'s one line at a time (a batch has its own). */
const singleLine = new SignedMessages();

/**
 * Step 1 of verification, run on worker threads: everything one line can
 * prove alone. Strict JSON, the line schema, the statement's canonical form,
 * every signature against the key it names, and the entry hash recomputed.
 * Untrusted input: never throws, every failure becomes an ErrorResult.
 */
export function checkLine(bytes: Uint8Array, line: number, ed25519: Ed25519Backend): LineResult {
  singleLine.clear();
  return completeLine(prepareLine(bytes, line, singleLine), singleLine, ed25519);
}

function prepareEntry(entry: Entry, line: number, bytes: number, messages: SignedMessages): UnverifiedEntry {
  const statement: Statement = entry.envelope.statement;
  const message = messages.add(canonicalJson(statement));
  const statementBytes = messages.statement(message);
  const body = statement.body as { agentId?: unknown };
  const result: UnverifiedEntry['result'] = {
    kind: 'entry',
    line,
    partition: entry.partition,
    index: entry.index,
    sequencedAt: entry.sequencedAt,
    sequencedAtMs: Date.parse(entry.sequencedAt),
    authorityIndex: entry.authorityIndex,
    prev: entry.prev,
    hash: entry.hash,
    hashMatches: entryHashOf(entry, statementBytes) === entry.hash,
    signers: [],
    id: statement.id,
    type: statement.type,
    author: statement.author,
    issuedAtMs: Date.parse(statement.issuedAt),
    agentId: typeof body.agentId === 'string' ? body.agentId : null,
    statement: KEEP_STATEMENT.has(statement.type) ? statement : null,
    statementHash: KEEP_HASH.has(statement.type) ? statementHashOf(statementBytes) : null,
    replayBody: KEEP_BODY.has(statement.type) ? (statement.body as Record<string, unknown>) : null,
    bytes,
  };
  return { kind: 'unverified', result, signatures: entry.envelope.signatures, message, claimed: claimedPosition(entry) };
}
