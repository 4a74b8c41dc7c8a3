import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

const HEX_RE = /^(?:[0-9a-f]{2})*$/;
const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Decodes lowercase hex (untrusted input). Uppercase, odd length or a wrong
 * expected length is refused with SCHEMA_INVALID, so one value has one text.
 */
export function fromHex(text: string, expectedBytes?: number): Uint8Array {
  if (typeof text !== 'string' || !HEX_RE.test(text) || (expectedBytes !== undefined && text.length !== expectedBytes * 2)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `not ${expectedBytes ?? 'a'}${expectedBytes === undefined ? '' : '-byte'} lowercase hex value`);
  }
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** Standard padded base64 (RFC 4648 section 4) of bytes. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Decodes standard padded base64 (untrusted input). Only the canonical
 * encoding is accepted (unused trailing bits must be zero), so that a value
 * cannot be re-encoded into a different text that still decodes the same.
 */
export function fromBase64(text: string, expectedBytes?: number): Uint8Array {
  if (typeof text !== 'string' || !B64_RE.test(text)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not a standard base64 value');
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text || (expectedBytes !== undefined && bytes.length !== expectedBytes)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `not the canonical base64 of ${expectedBytes ?? 'a'} byte value`);
  }
  return new Uint8Array(bytes);
}

const textEncoder = new TextEncoder();

/** UTF-8 bytes of a string (the string must already be well-formed). */
export function utf8(text: string): Uint8Array {
  return textEncoder.encode(text);
}

/** Byte-wise equality without early exit on the first difference. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
