export { LedgerClient } from './client.js';
export type { ClientOptions, VerifiedDecision, Submitted } from './client.js';
