import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(client).sort(), ['LedgerClient', 'apiError', 'awaitStatement', 'deciderKeysFromGenesis', 'loadKey', 'statementOutcome', 'submitEnvelope', 'transportError']);
});
