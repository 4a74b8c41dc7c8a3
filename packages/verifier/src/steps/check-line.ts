import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  AUTHORITY_TYPES,
  BundleLineSchema,
  BundleHeaderSchema,
  BundleEntrySchema,
  BundleCheckpointSchema,
  BundleTrailerSchema,
  canonicalJson,
  entryHash,
  envelopeHash,
  headerOf,
  parseStrictJsonBytes,
  sha256Hex,
  verifyEnvelopeSignatures,
  type Ed25519Backend,
  type Entry,
  type Statement,
} from '@agent-ledger/core';
import type { LineResult } from '../line-result.js';

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
 * The position a broken line claims, when that much is readable: an entry's
 * partition and index, or for a line shaped like a checkpoint (it has a
 * `note`) its partition and index -1. Used only to report where it failed.
 */
function claimedPosition(value: unknown): { partition: number; index: number } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { partition, index, note } = value as { partition?: unknown; index?: unknown; note?: unknown };
  if (!Number.isSafeInteger(partition)) return null;
  if (typeof note === 'string' && index === undefined) return { partition: partition as number, index: -1 };
  return Number.isSafeInteger(index) ? { partition: partition as number, index: index as number } : null;
}

/**
 * Step 1 of verification, run on worker threads: everything one line can
 * prove alone. Strict JSON, the line schema, the statement's canonical form,
 * every signature against the key it names, and the entry hash recomputed.
 * Untrusted input: never throws, every failure becomes an ErrorResult.
 */
export function checkLine(bytes: Uint8Array, line: number, ed25519: Ed25519Backend): LineResult {
  let raw: unknown = null;
  try {
    raw = parseStrictJsonBytes(bytes, BUNDLE_LINE_LIMITS);
    // Dispatch on `kind` by hand: one object schema is several times cheaper
    // than zod's discriminated union over the four line kinds.
    const kind = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as { kind?: unknown }).kind : undefined;
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
        return checkEntry(value as unknown as Entry, line, ed25519, bytes.length);
    }
  } catch (err) {
    const code = err instanceof LedgerError ? err.code : ReasonCode.SCHEMA_INVALID;
    const message = err instanceof Error ? err.message : 'unreadable line';
    return { kind: 'error', line, code, message, claimed: claimedPosition(raw) };
  }
}

function checkEntry(entry: Entry, line: number, ed25519: Ed25519Backend, bytes: number): LineResult {
  const statement: Statement = entry.envelope.statement;
  const statementCanonical = canonicalJson(statement);
  const signers = verifyEnvelopeSignatures(entry.envelope, statementCanonical, ed25519);
  const computedHash = entryHash(headerOf(entry, envelopeHash(entry.envelope, statementCanonical)));
  const body = statement.body as { agentId?: unknown };
  return {
    kind: 'entry',
    line,
    partition: entry.partition,
    index: entry.index,
    sequencedAt: entry.sequencedAt,
    sequencedAtMs: Date.parse(entry.sequencedAt),
    authorityIndex: entry.authorityIndex,
    prev: entry.prev,
    hash: entry.hash,
    hashMatches: computedHash === entry.hash,
    signers,
    id: statement.id,
    type: statement.type,
    author: statement.author,
    issuedAtMs: Date.parse(statement.issuedAt),
    agentId: typeof body.agentId === 'string' ? body.agentId : null,
    statement: KEEP_STATEMENT.has(statement.type) ? statement : null,
    statementHash: KEEP_HASH.has(statement.type) ? sha256Hex(statementCanonical) : null,
    replayBody: KEEP_BODY.has(statement.type) ? (statement.body as Record<string, unknown>) : null,
    bytes,
  };
}
