/**
 * C2SP tlog-checkpoint note bodies (https://c2sp.org/tlog-checkpoint):
 *
 *     <origin>\n
 *     <tree size, ASCII decimal, no leading zeros>\n
 *     <base64 of the 32-byte RFC 6962 / RFC 9162 root hash>\n
 *     [<extension line>\n]...
 *
 * This module only formats and parses the text; sign and open it as a signed
 * note with `signNote` / `openNote` from note.ts. Both directions throw
 * LedgerError(CHECKPOINT_INVALID) on anything that is not a valid checkpoint.
 */
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/** A transparency-log checkpoint: the log's identity and its Merkle tree head. */
export interface Checkpoint {
  /** Unique log identity, e.g. "example.com/log42". Non-empty, one line. */
  readonly origin: string;
  /** Number of leaves in the tree. */
  readonly size: number;
  /** 32-byte Merkle tree root hash (MTH) at `size`. */
  readonly rootHash: Uint8Array;
  /** Optional opaque extension lines, each non-empty (NOT RECOMMENDED by the spec). */
  readonly extensions: readonly string[];
}

const ROOT_HASH_SIZE = 32;
/** Same cap as a whole signed note (note.ts): a checkpoint body can never be larger. */
const MAX_CHECKPOINT_BYTES = 1024 * 1024;
// ASCII controls other than newline, which also catches stray CR (a CRLF note).
const CONTROL_EXCEPT_NEWLINE = /[\u0000-\u0009\u000b-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// "the ASCII decimal representation ... with no leading zeroes (unless the tree is empty ...)"
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;
const BASE64_SHAPE = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(message: string): LedgerError {
  return new LedgerError(ReasonCode.CHECKPOINT_INVALID, message);
}

/** A line the note format can carry: non-empty, valid UTF-8, no newline or other control character. */
function isValidLine(line: unknown): line is string {
  return (
    typeof line === 'string' &&
    line.length > 0 &&
    !line.includes('\n') &&
    !CONTROL_EXCEPT_NEWLINE.test(line) &&
    !LONE_SURROGATE.test(line)
  );
}

/** Strict standard base64 (RFC 4648 section 4): padded, canonical. Null if invalid. */
function decodeBase64Strict(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || !BASE64_SHAPE.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return null;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Formats the checkpoint note text: "origin\nsize\nbase64(root)\n" then each extension line and "\n". */
export function formatCheckpoint(cp: Checkpoint): string {
  if (cp === null || typeof cp !== 'object') throw invalid('checkpoint must be an object');
  if (!isValidLine(cp.origin)) throw invalid('checkpoint origin must be a non-empty single line without control characters');
  if (typeof cp.size !== 'number' || !Number.isSafeInteger(cp.size) || cp.size < 0) {
    throw invalid('checkpoint size must be a non-negative safe integer');
  }
  if (!(cp.rootHash instanceof Uint8Array) || cp.rootHash.length !== ROOT_HASH_SIZE) {
    throw invalid(`checkpoint root hash must be ${ROOT_HASH_SIZE} bytes`);
  }
  const extensions = cp.extensions ?? [];
  if (!Array.isArray(extensions)) throw invalid('checkpoint extensions must be an array');
  let out = `${cp.origin}\n${cp.size}\n${Buffer.from(cp.rootHash).toString('base64')}\n`;
  for (const ext of extensions) {
    if (!isValidLine(ext)) throw invalid('checkpoint extension lines must be non-empty single lines without control characters');
    out += `${ext}\n`;
  }
  return out;
}

/**
 * Parses checkpoint note text (the `text` of an opened note, ending in "\n").
 * Strict: non-empty origin; decimal size without leading zeros within the
 * safe-integer range; canonical base64 of exactly 32 bytes; no empty lines;
 * no CR or other control characters; valid UTF-8.
 */
export function parseCheckpoint(text: string): Checkpoint {
  if (typeof text !== 'string') throw invalid('checkpoint must be a string');
  if (text.length > MAX_CHECKPOINT_BYTES || Buffer.byteLength(text, 'utf8') > MAX_CHECKPOINT_BYTES) {
    throw invalid(`checkpoint exceeds ${MAX_CHECKPOINT_BYTES} bytes`);
  }
  if (CONTROL_EXCEPT_NEWLINE.test(text)) throw invalid('checkpoint contains a control character');
  if (LONE_SURROGATE.test(text)) throw invalid('checkpoint is not valid UTF-8');
  if (!text.endsWith('\n')) throw invalid('checkpoint must end in a newline');
  const lines = text.slice(0, -1).split('\n');
  // "a sequence of at least three non-empty lines"; extension lines "MUST be non-empty".
  if (lines.length < 3) throw invalid('checkpoint needs origin, size and root hash lines');
  if (lines.some((line) => line.length === 0)) throw invalid('checkpoint contains an empty line');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];

  if (!DECIMAL.test(sizeText)) throw invalid('checkpoint size is not a decimal number without leading zeros');
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) throw invalid('checkpoint size is too large');

  const rootHash = decodeBase64Strict(rootText);
  if (rootHash === null) throw invalid('checkpoint root hash is not canonical base64');
  if (rootHash.length !== ROOT_HASH_SIZE) throw invalid(`checkpoint root hash is not ${ROOT_HASH_SIZE} bytes`);

  return Object.freeze({ origin, size, rootHash, extensions: Object.freeze(extensions) });
}
