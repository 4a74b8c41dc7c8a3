import { ReasonCode } from '@agent-ledger/refusals';
import type { Ed25519Backend, Entry, LineBatch } from '@agent-ledger/core';
import type { LineResult } from '../line-result.js';
import { ResultWriter, type PackedResults } from '../result-codec.js';
import { checkLine, lineError, prepareLine } from './check-line.js';
import { SignedMessages, verifySignatures } from './signed-messages.js';

/** A line's result before its signatures were verified, as {@link checkAndPackBatch} remembers it. */
interface Unverified {
  readonly line: number;
  /** Where its result was written. */
  readonly start: number;
  readonly end: number;
  readonly signatures: Entry['envelope']['signatures'];
  readonly message: number;
  readonly claimed: { readonly partition: number; readonly index: number } | null;
}

/**
 * Lines prepared before their signatures are verified: enough to keep each
 * kind of work warm in the CPU caches for a while (see {@link SignedMessages}).
 */
const VERIFY_AFTER_LINES = 128;
/** Signed messages held before their signatures are verified, whatever the lines' size. */
const VERIFY_AFTER_BYTES = 1 << 20;

/** Messages of the batch being checked (a worker checks one batch at a time). */
const batchMessages = new SignedMessages();

function oversizeLine(line: number): LineResult {
  return { kind: 'error', line, code: ReasonCode.SCHEMA_INVALID, message: 'line exceeds the maximum length', claimed: null };
}

/** SPEC.md section 8: every line, the last one too, ends in a newline. */
function unterminatedLine(line: number): LineResult {
  return { kind: 'error', line, code: ReasonCode.SCHEMA_INVALID, message: 'the last line does not end in a newline (truncated?)', claimed: null };
}

/**
 * Step 1 over a batch on a worker: {@link checkLine} for every line, results
 * packed in order. Every line is checked but for its signatures and its
 * result written at once, as if they verify (the signers are then the key
 * ids, in order); then the signatures of a run of lines are verified
 * together, and the result of a line whose signatures fail is replaced by the
 * error {@link checkLine} gives. Only the signatures and a few numbers are
 * held per line meanwhile, so the line's objects die young.
 */
export function checkAndPackBatch(batch: LineBatch, ed25519: Ed25519Backend, capacityHint?: number): PackedResults {
  const oversize = new Set(batch.oversize);
  const out = new ResultWriter(capacityHint);
  const unverified: Unverified[] = [];
  batchMessages.clear();

  const verifyHeld = (): void => {
    const failed: [Unverified, LineResult][] = [];
    for (const held of unverified) {
      try {
        verifySignatures(held.signatures, batchMessages.message(held.message), ed25519);
      } catch (err) {
        failed.push([held, lineError(held.line, err, held.claimed)]);
      }
    }
    // Last first: replacing a result moves only the results after it.
    for (let f = failed.length - 1; f >= 0; f--) {
      const [held, error] = failed[f] as [Unverified, LineResult];
      out.replace(held.start, held.end, error);
    }
    unverified.length = 0;
    batchMessages.clear();
  };

  let start = 0;
  for (let k = 0; k < batch.ends.length; k++) {
    const end = batch.ends[k] as number;
    const line = batch.firstLine + k;
    const prepared = oversize.has(line) ? oversizeLine(line) : line === batch.unterminated ? unterminatedLine(line) : prepareLine(batch.bytes.subarray(start, end), line, batchMessages);
    start = end;
    if (prepared.kind === 'unverified') {
      // What verifySignatures returns when they all verify.
      prepared.result.signers = prepared.signatures.map((s) => s.keyId);
      const at = out.length;
      out.write(prepared.result);
      unverified.push({ line, start: at, end: out.length, signatures: prepared.signatures, message: prepared.message, claimed: prepared.claimed });
      if (unverified.length >= VERIFY_AFTER_LINES || batchMessages.byteLength >= VERIFY_AFTER_BYTES) verifyHeld();
    } else {
      out.write(prepared);
    }
  }
  verifyHeld();
  return out.finish();
}

/** Runs {@link checkLine} over every line of a batch, in order, one line at a time. */
export function* checkBatchLines(batch: LineBatch, ed25519: Ed25519Backend): Generator<LineResult> {
  const oversize = new Set(batch.oversize);
  let start = 0;
  for (let k = 0; k < batch.ends.length; k++) {
    const end = batch.ends[k] as number;
    const line = batch.firstLine + k;
    yield oversize.has(line) ? oversizeLine(line) : line === batch.unterminated ? unterminatedLine(line) : checkLine(batch.bytes.subarray(start, end), line, ed25519);
    start = end;
  }
}

/** Runs {@link checkLine} over every line of a batch, in order. */
export function checkBatch(batch: LineBatch, ed25519: Ed25519Backend): LineResult[] {
  return [...checkBatchLines(batch, ed25519)];
}
