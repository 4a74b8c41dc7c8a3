import { invalidArgument } from './errors.js';

/** Kafka offsets are int64; the ledger never uses negative (sentinel) offsets. */
const MAX_OFFSET = (1n << 63n) - 1n;
const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

/** Parses a decimal offset string, throwing SCHEMA_INVALID for anything else. */
export function parseOffset(value: string, what: string): bigint {
  if (typeof value !== 'string' || !DECIMAL.test(value)) throw invalidArgument(`${what} must be a decimal offset, got ${JSON.stringify(value)}`);
  const offset = BigInt(value);
  if (offset > MAX_OFFSET) throw invalidArgument(`${what} ${value} exceeds the int64 range`);
  return offset;
}

/** Checks a partition number's shape (its existence is checked against metadata elsewhere). */
export function checkPartition(partition: number, what: string): void {
  if (!Number.isSafeInteger(partition) || partition < 0) throw invalidArgument(`${what} must be a non-negative integer, got ${String(partition)}`);
}
