export { ReasonCode, KNOWN_CODES, SILENCE_CODES, isReasonCode } from './codes.js';
export { formatRefusal, parseRefusal } from './refusal.js';
export type { Refusal } from './refusal.js';
export { LedgerError } from './error.js';
export { OperationalCode, OPERATIONAL_CODES, OperationalError, isOperationalCode } from './operational.js';
