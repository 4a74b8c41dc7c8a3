export { LedgerClient, submitEnvelope } from './client.js';
export type { ClientOptions, VerifiedDecision, Submitted } from './client.js';
export { apiError, transportError } from './errors.js';
