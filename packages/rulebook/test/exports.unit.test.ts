import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as rulebook from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(rulebook).sort(), [
    'AuthorityHistory',
    'DEFAULT_CONFIRMATION',
    'DEFAULT_DEADLINES_MS',
    'DEFAULT_FATIGUE',
    'DEFAULT_RULES_VERSION',
    'ENTRY_LINE_OVERHEAD',
    'MAX_MIN_READ_MS',
    'MAX_SUGGESTED_REQUESTS',
    'MAX_SUGGESTED_TIER',
    'READING_UNIT_BYTES',
    'RELEASED_RULES',
    'REPLAY_WINDOW',
    'admitsProposal',
    'countResponse',
    'counts',
    'decide',
    'escalationFor',
    'evolve',
    'finalDecision',
    'firstDecision',
    'initialState',
    'isReadingTime',
    'judge',
    'lifeEntryOf',
    'minimumReadingMs',
    'oldestOpenMs',
    'operationBytes',
    'operationKey',
    'remember',
    'rulesFor',
    'withRules',
  ]);
});
