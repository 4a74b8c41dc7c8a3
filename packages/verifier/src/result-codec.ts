import { deserialize, serialize } from 'node:v8';
import { STATEMENT_TYPES, type Statement, type StatementType } from '@agent-ledger/core';
import type { EntryResult, LineResult } from './line-result.js';

/**
 * A batch's line results, encoded back to back in one buffer that a worker
 * transfers instead of cloning an object graph.
 *
 * Why: a cloned result array lands on the folding thread as a whole batch of
 * objects the moment it arrives, and every batch in flight then lives until
 * the fold reaches it, surviving young-generation collections into the old
 * generation. Packed results sit outside the heap until the fold decodes
 * them, one line at a time; on the checking thread each result object dies
 * as soon as it is encoded.
 *
 * Entry results (nearly every line) have a fixed binary layout: numbers as
 * float64 (every value survives, NaN and -0 included), strings as UTF-8 with
 * a length, the replay body as JSON text. The body is JSON-safe: it comes
 * from the strict parser and a statement schema without optional fields, so
 * JSON gives back the same value. The rare rest (the statements of authority
 * entries and rejections, and headers, checkpoints, trailers and errors) go in
 * the structured-clone format `postMessage` uses, so absent and undefined
 * fields survive exactly.
 */
export interface PackedResults {
  /** The encoded results, back to back. Owns its buffer, which is transferred. */
  readonly bytes: Uint8Array;
  /** Number of results. */
  readonly count: number;
}

const ENTRY = 1;
const CLONED = 2;

const HASH_MATCHES = 1;
const HAS_AGENT = 2;
const HAS_STATEMENT = 4;
const HAS_STATEMENT_HASH = 8;
const HAS_REPLAY_BODY = 16;
/** The usual case, written as a flag: the author's key is the one signer. */
const AUTHOR_SIGNED_ALONE = 32;
/** The usual case, written as a flag: the statement is about its author (an agent's own proposal). */
const AGENT_IS_AUTHOR = 64;

/** Statement types by number (a byte instead of a string each way); 255 for a type not in the list. */
const TYPE_CODES: ReadonlyMap<string, number> = new Map(STATEMENT_TYPES.map((type, code) => [type, code]));
const OTHER_TYPE = 255;

/** Appends to a growing buffer. */
class Writer {
  #bytes: Buffer;
  #view: DataView;
  #at = 0;

  constructor(capacity: number) {
    this.#bytes = Buffer.allocUnsafeSlow(capacity);
    this.#view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength);
  }

  #reserve(n: number): void {
    if (this.#at + n <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#at + n, 2 * this.#bytes.length));
    this.#bytes.copy(grown, 0, 0, this.#at);
    this.#bytes = grown;
    this.#view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  u8(value: number): void {
    this.#reserve(1);
    this.#bytes[this.#at++] = value;
  }

  f64(value: number): void {
    this.#reserve(8);
    this.#view.setFloat64(this.#at, value);
    this.#at += 8;
  }

  /** Well-formed strings only (every string here passed the strict parser or a schema): UTF-8 round-trips them. */
  string(value: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    this.#reserve(4 + 3 * value.length);
    const length = this.#bytes.write(value, this.#at + 4, 'utf8');
    this.#view.setUint32(this.#at, length);
    this.#at += 4 + length;
  }

  blob(value: Uint8Array): void {
    this.#reserve(4 + value.length);
    this.#view.setUint32(this.#at, value.length);
    this.#bytes.set(value, this.#at + 4);
    this.#at += 4 + value.length;
  }

  /** Appends bytes as they are (no length). */
  bytes(value: Uint8Array): void {
    this.#reserve(value.length);
    this.#bytes.set(value, this.#at);
    this.#at += value.length;
  }

  /** Forgets everything from `at` on. */
  truncate(at: number): void {
    this.#at = at;
  }

  get length(): number {
    return this.#at;
  }

  /** The bytes written, as a view over the buffer (which is transferable: never Buffer's shared pool). */
  finish(): Uint8Array {
    return new Uint8Array(this.#bytes.buffer, this.#bytes.byteOffset, this.#at);
  }
}

/** Reads what {@link Writer} wrote, in order. */
class Reader {
  readonly #bytes: Buffer;
  readonly #view: DataView;
  #at = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  u8(): number {
    return this.#bytes[this.#at++] as number;
  }

  f64(): number {
    const value = this.#view.getFloat64(this.#at);
    this.#at += 8;
    return value;
  }

  string(): string {
    const length = this.#view.getUint32(this.#at);
    const start = this.#at + 4;
    this.#at = start + length;
    return this.#bytes.toString('utf8', start, start + length);
  }

  blob(): Uint8Array {
    const length = this.#view.getUint32(this.#at);
    const start = this.#at + 4;
    this.#at = start + length;
    return this.#bytes.subarray(start, start + length);
  }
}

function writeEntry(out: Writer, entry: EntryResult): void {
  const authorSignedAlone = entry.signers.length === 1 && entry.signers[0] === entry.author.keyId;
  const agentIsAuthor = entry.agentId !== null && entry.agentId === entry.author.principal;
  const typeCode = TYPE_CODES.get(entry.type) ?? OTHER_TYPE;
  out.u8(ENTRY);
  out.f64(entry.line);
  out.f64(entry.partition);
  out.f64(entry.index);
  out.f64(entry.sequencedAtMs);
  out.f64(entry.authorityIndex);
  out.f64(entry.issuedAtMs);
  out.f64(entry.bytes);
  out.u8(
    (entry.hashMatches ? HASH_MATCHES : 0) |
      (entry.agentId !== null ? HAS_AGENT : 0) |
      (entry.statement !== null ? HAS_STATEMENT : 0) |
      (entry.statementHash !== null ? HAS_STATEMENT_HASH : 0) |
      (entry.replayBody !== null ? HAS_REPLAY_BODY : 0) |
      (authorSignedAlone ? AUTHOR_SIGNED_ALONE : 0) |
      (agentIsAuthor ? AGENT_IS_AUTHOR : 0),
  );
  out.u8(typeCode);
  if (typeCode === OTHER_TYPE) out.string(entry.type);
  out.string(entry.sequencedAt);
  out.string(entry.prev);
  out.string(entry.hash);
  out.string(entry.id);
  out.string(entry.author.principal);
  out.string(entry.author.keyId);
  if (!authorSignedAlone) {
    out.f64(entry.signers.length);
    for (const signer of entry.signers) out.string(signer);
  }
  if (entry.agentId !== null && !agentIsAuthor) out.string(entry.agentId);
  if (entry.statementHash !== null) out.string(entry.statementHash);
  if (entry.replayBody !== null) out.string(JSON.stringify(entry.replayBody));
  if (entry.statement !== null) out.blob(serialize(entry.statement));
}

function readEntry(input: Reader): EntryResult {
  const line = input.f64();
  const partition = input.f64();
  const index = input.f64();
  const sequencedAtMs = input.f64();
  const authorityIndex = input.f64();
  const issuedAtMs = input.f64();
  const bytes = input.f64();
  const flags = input.u8();
  const typeCode = input.u8();
  const type = (typeCode === OTHER_TYPE ? input.string() : STATEMENT_TYPES[typeCode]) as StatementType;
  const sequencedAt = input.string();
  const prev = input.string();
  const hash = input.string();
  const id = input.string();
  const principal = input.string();
  const keyId = input.string();
  let signers: string[];
  if ((flags & AUTHOR_SIGNED_ALONE) !== 0) {
    signers = [keyId];
  } else {
    signers = [];
    for (let k = input.f64(); k > 0; k--) signers.push(input.string());
  }
  const agentId = (flags & HAS_AGENT) === 0 ? null : (flags & AGENT_IS_AUTHOR) !== 0 ? principal : input.string();
  const statementHash = (flags & HAS_STATEMENT_HASH) !== 0 ? input.string() : null;
  const replayBody = (flags & HAS_REPLAY_BODY) !== 0 ? (JSON.parse(input.string()) as Record<string, unknown>) : null;
  const statement = (flags & HAS_STATEMENT) !== 0 ? (deserialize(input.blob()) as Statement) : null;
  return {
    kind: 'entry',
    line,
    partition,
    index,
    sequencedAt,
    sequencedAtMs,
    authorityIndex,
    prev,
    hash,
    hashMatches: (flags & HASH_MATCHES) !== 0,
    signers,
    id,
    type,
    author: { principal, keyId },
    issuedAtMs,
    agentId,
    statement,
    statementHash,
    replayBody,
    bytes,
  };
}

/**
 * Encodes results one at a time, in order, into a buffer that grows as
 * needed; a result already written can be replaced (a worker writes an
 * entry's result before its signatures are verified, see check-batch).
 */
export class ResultWriter {
  #out: Writer;
  #count = 0;

  /** `capacityHint` is the expected size in bytes (the previous batch's, say). */
  constructor(capacityHint = 64 * 1024) {
    this.#out = new Writer(Math.max(capacityHint, 1024));
  }

  /** Bytes written so far: where the next result starts. */
  get length(): number {
    return this.#out.length;
  }

  write(result: LineResult): void {
    writeResult(this.#out, result);
    this.#count += 1;
  }

  /** Replaces the result written at `start..end` (a {@link length} before and after its {@link write}). */
  replace(start: number, end: number, result: LineResult): void {
    const written = this.#out.finish();
    const tail = Buffer.from(written.subarray(end));
    this.#out.truncate(start);
    writeResult(this.#out, result);
    this.#out.bytes(tail);
  }

  /** The results written, packed. */
  finish(): PackedResults {
    return { bytes: this.#out.finish(), count: this.#count };
  }
}

function writeResult(out: Writer, result: LineResult): void {
  if (result.kind === 'entry') {
    writeEntry(out, result);
  } else {
    out.u8(CLONED);
    out.blob(serialize(result));
  }
}

/**
 * Encodes results as they are produced. `capacityHint` is the expected size
 * in bytes (the previous batch's, say): the buffer grows past it if needed.
 */
export function packResults(results: Iterable<LineResult>, capacityHint = 64 * 1024): PackedResults {
  const out = new ResultWriter(capacityHint);
  for (const result of results) out.write(result);
  return out.finish();
}

/** Decodes packed results one at a time, in order. */
export function* unpackResults(packed: PackedResults): Generator<LineResult> {
  const input = new Reader(packed.bytes);
  for (let k = 0; k < packed.count; k++) {
    yield input.u8() === ENTRY ? readEntry(input) : (deserialize(input.blob()) as LineResult);
  }
}
