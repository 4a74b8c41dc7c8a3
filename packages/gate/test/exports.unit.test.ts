import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as gate from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(gate).sort(), [
    'CHANNELS',
    'COMMAND_RULES',
    'CRISIS_DECISION_ACTIONS',
    'CRISIS_SUPPORT_ACTIONS',
    'DEFAULT_CHANNEL_THRESHOLDS',
    'DEFAULT_GRANT_TIER',
    'DEFAULT_KNOWN_HOSTS',
    'LATEST_RULES_VERSION',
    'Outcome',
    'PATTERN_RULES',
    'PRECEDENCE',
    'PathClass',
    'RULES_VERSIONS',
    'SEVERITY_WEIGHTS',
    'SIGNAL_RULES',
    'Tier',
    'ToolKind',
    'UNINSPECTABLE_RULE',
    'UNKNOWN_HOST_RULE',
    'canonicalToolName',
    'classify',
    'decide',
    'dequoteShell',
    'evolve',
    'findGrants',
    'grantFromScenario',
    'grantStatus',
    'initialState',
    'isActive',
    'isRulesVersion',
    'normalizePath',
    'normalizeText',
    'pathFacts',
    'resolveConfig',
    'scoreCorpus',
    'toolKind',
    'wordForm',
  ]);
});

test('rule ids are unique across the tables', () => {
  const ids = [...gate.PATTERN_RULES, gate.UNKNOWN_HOST_RULE, gate.UNINSPECTABLE_RULE, ...gate.SIGNAL_RULES, ...gate.COMMAND_RULES].map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length);
});
