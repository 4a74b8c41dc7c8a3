import { ReasonCode } from '@agent-ledger/refusals';
import type { Ed25519Backend, LineBatch } from '@agent-ledger/core';
import type { LineResult } from '../line-result.js';
import { checkLine } from './check-line.js';

/** Runs {@link checkLine} over every line of a batch, in order, one line at a time. */
export function* checkBatchLines(batch: LineBatch, ed25519: Ed25519Backend): Generator<LineResult> {
  const oversize = new Set(batch.oversize);
  let start = 0;
  for (let k = 0; k < batch.ends.length; k++) {
    const end = batch.ends[k] as number;
    const line = batch.firstLine + k;
    if (oversize.has(line)) {
      yield { kind: 'error', line, code: ReasonCode.SCHEMA_INVALID, message: 'line exceeds the maximum length', claimed: null };
    } else {
      yield checkLine(batch.bytes.subarray(start, end), line, ed25519);
    }
    start = end;
  }
}

/** Runs {@link checkLine} over every line of a batch, in order. */
export function checkBatch(batch: LineBatch, ed25519: Ed25519Backend): LineResult[] {
  return [...checkBatchLines(batch, ed25519)];
}
