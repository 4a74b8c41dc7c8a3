import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decide as gateDecide, type DecideCommand, type GateState } from '@agent-ledger/gate';
import { RELEASED_RULES, withRules, type RulesSpec } from '@agent-ledger/rulebook';
import { verifyBundle } from '@agent-ledger/verifier';
import { readTrustRoot } from '@agent-ledger/ledger';
import { TestLedger, repoRoot } from './fixtures.js';
import { RULES_LATEST, RULES_V1, assertFailsAt, assertValid, recordDecision, verify } from './replay-support.js';

// Rules versions: every decision names the rules that made it, verify-chain
// replays it with those, so changing a weight is a new version and never
// breaks an old bundle.

/** A hypothetical next version (number 6: 1-5 are released): version 1's classifier with the weight of `pattern.sudo` changed from 1.5 to 1.25, and version 2's KEY_REVOKED block. */
const NEXT: RulesSpec = {
  version: 6,
  classify: (command: DecideCommand, state: GateState) => {
    const decision = gateDecide(command, state, { rulesVersion: 1 });
    return decision.reasons.includes('pattern.sudo') ? { ...decision, risk: decision.risk - 0.25 } : decision;
  },
  revokedKeyBlocks: true,
};
const WITH_NEXT = withRules(NEXT);
const SUDO = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'sudo ls' }, context: {} };

test('every compat bundle still verifies when a new rules version is released', async () => {
  const compat = join(repoRoot, 'test/vectors/compat');
  const bundles = readdirSync(compat).filter((f) => f.endsWith('.ndjson'));
  assert.ok(bundles.length >= 2, 'a bundle per rules version');
  for (const file of bundles) {
    const trustRoot = readTrustRoot(join(compat, file.replace('.ndjson', '.trust-root.json')));
    const text = readFileSync(join(compat, file), 'utf8');
    for (const rules of [RELEASED_RULES, WITH_NEXT]) {
      const report = await verifyBundle([text], trustRoot, { workers: 0, rules });
      assert.equal(report.failure, null, `${file}: ${report.failure?.message}`);
    }
  }
});

test('the changed weight changes the decision, and a decision replays with the version it names', async () => {
  const ledger = new TestLedger();
  const old = ledger.propose(SUDO);
  const v1 = recordDecision(ledger, old, {}, { rules: RULES_V1 });
  const fresh = ledger.propose({ ...SUDO, args: { command: 'sudo ls -la' } });
  const next = recordDecision(ledger, fresh, {}, { rules: NEXT });
  assert.equal(next.expected.risk, v1.expected.risk - 0.25, 'the hypothetical version weighs sudo less');
  assertValid(await verify(ledger, { rules: WITH_NEXT }));
});

test('a decision naming a version with another rule\'s result fails at that decision', async () => {
  const ledger = new TestLedger();
  const proposal = ledger.propose(SUDO);
  // Made by version 1 (risk with weight 1.5), but claiming version 6.
  const { decision } = recordDecision(ledger, proposal, { rulesVersion: 6 }, { rules: RULES_V1 });
  assertFailsAt(await verify(ledger, { rules: WITH_NEXT }), 'POLICY_VIOLATION', decision.entry);
});

test('a decision naming a rules version the verifier does not know fails with POLICY_VIOLATION', async () => {
  for (const rulesVersion of [6, 999]) {
    const ledger = new TestLedger();
    const proposal = ledger.propose(SUDO);
    const { decision } = recordDecision(ledger, proposal, {}, { rules: { ...NEXT, version: rulesVersion } });
    assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', decision.entry);
  }
});

test('rules 2: a proposal decided after its agent\'s key was revoked is blocked with KEY_REVOKED, and nothing else verifies', async () => {
  const SAFE_LS = { ...SUDO, args: { command: 'ls -la' } };
  const revokedThenDecided = (rules: RulesSpec, keyRevoked: boolean): { ledger: TestLedger; decision: ReturnType<typeof recordDecision> } => {
    const ledger = new TestLedger();
    const proposal = ledger.propose(SAFE_LS);
    // Sequenced before the revocation, decided after it (attack 12).
    ledger.say('key.revoked', { keyId: ledger.agent.keyId, reason: 'key compromised' }, ledger.admin);
    return { ledger, decision: recordDecision(ledger, proposal, {}, { rules, keyRevoked }) };
  };
  const blocked = revokedThenDecided(RULES_LATEST, true);
  assert.deepEqual([blocked.decision.expected.outcome, blocked.decision.expected.code], ['block', 'KEY_REVOKED']);
  assertValid(await verify(blocked.ledger));
  // A gate that ignored the revocation under rules 2: verify-chain replays the block and refuses the allow.
  const allowed = revokedThenDecided(RULES_LATEST, false);
  assert.equal(allowed.decision.expected.outcome, 'allow');
  assertFailsAt(await verify(allowed.ledger), 'POLICY_VIOLATION', allowed.decision.decision.entry);
  // Rules 1 did not look at revocations: old bundles keep verifying.
  assertValid(await verify(revokedThenDecided(RULES_V1, false).ledger));
});
