export { LedgerClient, awaitStatement, statementOutcome, submitEnvelope } from './client.js';
export type { ClientOptions, StatementOutcome, VerifiedDecision, Submitted } from './client.js';
export { apiError, transportError } from './errors.js';
export { loadKey, deciderKeysFromGenesis } from './key-file.js';
export type { Signer } from '@agent-ledger/core';
