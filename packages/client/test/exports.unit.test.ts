import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(client).sort(), ['LedgerClient', 'PINNED_ROLES', 'ReceiptSchema', 'ToolRefusedError', 'apiError', 'awaitStatement', 'checkTrustExtends', 'deciderKeysFromGenesis', 'deciderKeysOf', 'fetchTrust', 'formatTrust', 'guard', 'keyValidAt', 'ledgerSettings', 'loadKey', 'loadTrust', 'parseTrust', 'pinTrust', 'statementOutcome', 'submitEnvelope', 'transportError', 'verifyReceipt']);
});
