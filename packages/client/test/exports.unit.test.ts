import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(client).sort(), ['LedgerClient', 'PINNED_ROLES', 'READ_AUTH_CONTEXT', 'READ_AUTH_SCHEME', 'ReceiptSchema', 'ToolRefusedError', 'apiError', 'awaitStatement', 'buildTrust', 'checkTrustExtends', 'deciderKeysFromGenesis', 'deciderKeysOf', 'fetchInstallation', 'fetchTrust', 'formatTrust', 'guard', 'installationOf', 'keyValidAt', 'ledgerSettings', 'loadKey', 'loadTrust', 'parseReadAuthorization', 'parseTrust', 'pinTrust', 'readBodyHash', 'readSigningMessage', 'signRead', 'signedFetch', 'statementOutcome', 'submitEnvelope', 'transportError', 'trustFromGenesis', 'verifyReceipt']);
});
