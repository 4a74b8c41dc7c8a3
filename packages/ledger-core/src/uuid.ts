import { randomBytes } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

let lastMillis = -1;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562 section 5.7) for the given Unix time in milliseconds:
 * 48-bit big-endian timestamp, version 7, 12 bits that increase within one
 * millisecond from this process (so ids sort in issue order), variant 10, 62
 * random bits.
 */
export function uuidv7(unixMillis: number = Date.now()): string {
  if (!Number.isSafeInteger(unixMillis) || unixMillis < 0 || unixMillis >= 2 ** 48) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'uuidv7: timestamp out of range');
  }
  if (unixMillis === lastMillis) counter = (counter + 1) & 0xfff;
  else {
    lastMillis = unixMillis;
    counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(unixMillis, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Unix millisecond timestamp embedded in a UUIDv7 (its first 48 bits). */
export function uuidv7Millis(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
