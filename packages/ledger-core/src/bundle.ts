import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { z } from 'zod';
import { EntrySchema, type Entry } from './entry.js';
import { Timestamp } from './statements.js';

/** Value of the header's `format` field. */
export const BUNDLE_FORMAT = 'agent-ledger-bundle';
/** The bundle format version this code writes; readers accept every version listed in SPEC.md. */
export const BUNDLE_VERSION = 1;
/** Longest bundle line accepted (bytes, without the newline). */
export const MAX_BUNDLE_LINE_BYTES = 1 << 20;

/** First line of a bundle. */
export const BundleHeaderSchema = z.strictObject({
  kind: z.literal('header'),
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(BUNDLE_VERSION),
  origin: z.string().min(1).max(200),
  exportedAt: Timestamp,
  /**
   * Entries each partition holds in this bundle, partition 0 first. It lets
   * the verifier know the position every line should have, so a failure is
   * reported where the bundle was changed; the signed trailer confirms it.
   */
  partitions: z.array(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)).min(1).max(1025),
});
/** An entry line. */
export const BundleEntrySchema = EntrySchema.extend({ kind: z.literal('entry') });
/** A checkpoint line: one partition's signed checkpoint note. */
export const BundleCheckpointSchema = z.strictObject({
  kind: z.literal('checkpoint'),
  partition: z.number().int().min(0).max(1024),
  note: z.string().min(1).max(65536),
});
/** Last line: the exporter's signed note over every partition's final size and root. */
export const BundleTrailerSchema = z.strictObject({
  kind: z.literal('trailer'),
  note: z.string().min(1).max(262144),
});
/** Any bundle line. */
export const BundleLineSchema = z.discriminatedUnion('kind', [
  BundleHeaderSchema,
  BundleEntrySchema,
  BundleCheckpointSchema,
  BundleTrailerSchema,
]);

/** A bundle header. */
export type BundleHeader = z.infer<typeof BundleHeaderSchema>;
/** A bundle line of any kind. */
export type BundleLine =
  | BundleHeader
  | (Entry & { kind: 'entry' })
  | z.infer<typeof BundleCheckpointSchema>
  | z.infer<typeof BundleTrailerSchema>;

/** One partition's final state, as listed in the trailer. */
export interface PartitionSummary {
  readonly partition: number;
  readonly size: number;
  /** Checkpoint lines the bundle holds for the partition (so none can be dropped unseen). */
  readonly checkpoints: number;
  /** Base64 Merkle root at `size`. */
  readonly root: string;
}

const TRAILER_TITLE = 'agent-ledger bundle v1';

/**
 * The trailer note text: a title line, the origin, then one line per
 * partition `<partition> <size> <checkpoints> <base64 root>`, in partition order.
 */
export function formatTrailer(origin: string, partitions: readonly PartitionSummary[]): string {
  return `${TRAILER_TITLE}\n${origin}\n${partitions.map((p) => `${p.partition} ${p.size} ${p.checkpoints} ${p.root}\n`).join('')}`;
}

/** Parses trailer note text (untrusted). Throws INTEGRITY_FAILURE when it is not one. */
export function parseTrailer(text: string): { origin: string; partitions: PartitionSummary[] } {
  const lines = text.split('\n');
  if (lines.pop() !== '' || lines[0] !== TRAILER_TITLE || lines.length < 3) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'trailer note is malformed');
  }
  const partitions: PartitionSummary[] = [];
  for (const [i, line] of lines.slice(2).entries()) {
    const m = /^(0|[1-9]\d{0,3}) (0|[1-9]\d{0,15}) (0|[1-9]\d{0,15}) ([A-Za-z0-9+/]{43}=)$/.exec(line);
    if (m === null || Number(m[1]) !== i) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `trailer line ${i + 3} is malformed`);
    partitions.push({ partition: i, size: Number(m[2]), checkpoints: Number(m[3]), root: m[4] as string });
  }
  return { origin: lines[1] as string, partitions };
}

/** A batch of raw bundle lines, packed in one buffer for transfer to a worker. */
export interface LineBatch {
  /** 1-based line number of the first line. */
  readonly firstLine: number;
  readonly bytes: Uint8Array;
  /** End offset (exclusive) of each line within `bytes`; line k spans ends[k-1]..ends[k]. */
  readonly ends: readonly number[];
  /** Lines longer than the limit: their line numbers (their bytes are dropped). */
  readonly oversize: readonly number[];
  /**
   * The line number of a last line the stream ended without its newline, in
   * the batch that holds it; absent otherwise. SPEC.md section 8: every line
   * ends in `\n`, so a verifier fails there.
   */
  readonly unterminated?: number;
}

/**
 * Splits a byte stream into batches of lines without ever holding more than
 * one batch plus one maximal line. A line longer than `maxLineBytes` is not
 * buffered: it is reported in `oversize` so the verifier can fail there.
 * A final line without a newline is still a line, reported in `unterminated`.
 */
export async function* readLineBatches(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  options: { batchLines?: number; maxLineBytes?: number } = {},
): AsyncGenerator<LineBatch> {
  const batchLines = options.batchLines ?? 512;
  const maxLineBytes = options.maxLineBytes ?? MAX_BUNDLE_LINE_BYTES;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  let lineNo = 0;
  let batchParts: Buffer[] = [];
  let batchBytes = 0;
  let ends: number[] = [];
  let oversize: number[] = [];
  let firstLine = 1;
  let unterminated: number | undefined;

  const flush = (): LineBatch => {
    const batch = { firstLine, bytes: new Uint8Array(Buffer.concat(batchParts, batchBytes)), ends, oversize, ...(unterminated === undefined ? {} : { unterminated }) };
    batchParts = [];
    batchBytes = 0;
    ends = [];
    oversize = [];
    firstLine = lineNo + 1;
    return batch;
  };
  const endLine = (tail: Buffer): void => {
    lineNo += 1;
    if (skipping || pendingBytes + tail.length > maxLineBytes) {
      oversize.push(lineNo);
      ends.push(batchBytes);
    } else {
      for (const part of pending) batchParts.push(part);
      batchParts.push(tail);
      batchBytes += pendingBytes + tail.length;
      ends.push(batchBytes);
    }
    pending = [];
    pendingBytes = 0;
    skipping = false;
  };

  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl === -1) break;
      endLine(buf.subarray(start, nl));
      start = nl + 1;
      if (ends.length >= batchLines) yield flush();
    }
    if (start < buf.length) {
      const rest = buf.subarray(start);
      if (!skipping) {
        if (pendingBytes + rest.length > maxLineBytes) {
          skipping = true;
          pending = [];
          pendingBytes = 0;
        } else {
          pending.push(Buffer.from(rest));
          pendingBytes += rest.length;
        }
      }
    }
  }
  if (pendingBytes > 0 || skipping) {
    endLine(Buffer.alloc(0));
    unterminated = lineNo;
  }
  if (ends.length > 0) yield flush();
}
