import { crc32 } from 'node:zlib';

/**
 * One frame of a segment file:
 *
 *     magic "LGF1" (4 bytes) | payload length (u32 BE) | CRC-32 of the payload (u32 BE) | payload
 *     payload = header length (u32 BE) | header (JSON, UTF-8) | record values, concatenated
 *
 * A frame is the unit of atomicity: a transaction (its records and its
 * consumed offset) is exactly one frame, so it is visible whole or not at
 * all. A frame is complete only when all `12 + length` bytes are present and
 * the CRC matches: that is the commit marker. Anything else at the end of the
 * newest segment is a torn tail, cut off when the log is opened.
 */
export const FRAME_MAGIC = Buffer.from('LGF1', 'latin1');
/** Bytes before the payload: magic, length, CRC. */
export const FRAME_PREFIX = 12;
/** Largest payload a frame may hold; a larger length field is corruption, not a frame. */
export const MAX_PAYLOAD = 256 * 1024 * 1024;

/** A record inside a frame, as stored (its value follows the header). */
export interface StoredRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly size: number;
}

/** A consumer group's position written by a frame. */
export interface StoredOffset {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: number;
}

/** What a frame says. */
export type FrameHeader =
  | { readonly kind: 'topic'; readonly name: string; readonly partitions: number; readonly config: Readonly<Record<string, string>> }
  /** A new writer epoch for a transactional id: every older writer with that id is fenced from here on. */
  | { readonly kind: 'fence'; readonly transactionalId: string; readonly epoch: number }
  /** A committed transaction (or a non-transactional publish: `transactionalId` null) with the offsets it commits. */
  | { readonly kind: 'commit'; readonly transactionalId: string | null; readonly epoch: number; readonly records: readonly StoredRecord[]; readonly offsets: readonly StoredOffset[] }
  /** Offsets taken by records of a transaction that failed: never readable, never reused (as Kafka's aborted records). */
  | { readonly kind: 'abort'; readonly reserved: readonly { readonly topic: string; readonly partition: number; readonly count: number }[] }
  /** A consumer group's offsets committed outside a transaction. */
  | { readonly kind: 'offsets'; readonly offsets: readonly StoredOffset[] };

/** Encodes one frame: the header and, for a commit, the record values in header order. */
export function encodeFrame(header: FrameHeader, values: readonly Buffer[] = []): Buffer {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const payloadLength = 4 + headerBytes.length + values.reduce((n, v) => n + v.length, 0);
  const frame = Buffer.allocUnsafe(FRAME_PREFIX + payloadLength);
  FRAME_MAGIC.copy(frame, 0);
  frame.writeUInt32BE(payloadLength, 4);
  frame.writeUInt32BE(headerBytes.length, FRAME_PREFIX);
  headerBytes.copy(frame, FRAME_PREFIX + 4);
  let at = FRAME_PREFIX + 4 + headerBytes.length;
  for (const v of values) {
    v.copy(frame, at);
    at += v.length;
  }
  frame.writeUInt32BE(crc32(frame.subarray(FRAME_PREFIX)), 8);
  return frame;
}

/** A frame read back: its header and where its record values lie in the buffer it was read from. */
export interface DecodedFrame {
  readonly header: FrameHeader;
  /** Offset in the scanned buffer of each record's value, in header order. */
  readonly valueAt: readonly number[];
  /** Bytes the frame takes. */
  readonly length: number;
}

/**
 * Decodes the frame at `at` of `buffer` (untrusted bytes from disk), or
 * returns null when the bytes there are not one complete, intact frame (too
 * short, wrong magic, impossible length, CRC mismatch, unreadable header).
 */
export function decodeFrame(buffer: Buffer, at: number): DecodedFrame | null {
  if (buffer.length - at < FRAME_PREFIX) return null;
  if (!buffer.subarray(at, at + 4).equals(FRAME_MAGIC)) return null;
  const payloadLength = buffer.readUInt32BE(at + 4);
  if (payloadLength < 4 || payloadLength > MAX_PAYLOAD || buffer.length - at - FRAME_PREFIX < payloadLength) return null;
  const payload = buffer.subarray(at + FRAME_PREFIX, at + FRAME_PREFIX + payloadLength);
  if (crc32(payload) !== buffer.readUInt32BE(at + 8)) return null;
  const headerLength = payload.readUInt32BE(0);
  if (headerLength > payloadLength - 4) return null;
  let header: FrameHeader;
  try {
    header = JSON.parse(payload.subarray(4, 4 + headerLength).toString('utf8')) as FrameHeader;
  } catch {
    return null;
  }
  const valueAt: number[] = [];
  let valueOffset = at + FRAME_PREFIX + 4 + headerLength;
  if (header.kind === 'commit') {
    for (const r of header.records) {
      valueAt.push(valueOffset);
      valueOffset += r.size;
    }
    if (valueOffset !== at + FRAME_PREFIX + payloadLength) return null;
  }
  return { header, valueAt, length: FRAME_PREFIX + payloadLength };
}
