import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as screen from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(screen).sort(), [
    'MAX_CLEARED_TIER',
    'OpenAICompatibleScreener',
    'PROPOSAL_CLOSE',
    'PROPOSAL_OPEN',
    'RCE_RULES',
    'RULES_SCREENER_MODEL',
    'RulesScreener',
    'SCREENED_BRANCHES',
    'SCREENING_DENIAL_CODE',
    'SYSTEM_PROMPT',
    'ScreenFailure',
    'ScreeningOutcome',
    'Verdict',
    'applyScreening',
    'isLocalScreener',
    'isScreened',
    'promptHashOf',
    'screenInputProblem',
    'screeningMessages',
    'screeningPolicy',
    'screeningRefusal',
    'screeningStatement',
  ]);
});
