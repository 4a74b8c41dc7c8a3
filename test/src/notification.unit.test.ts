import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BodyOf } from '@agent-ledger/core';
import { verifyBundle } from '@agent-ledger/verifier';
import { TestLedger } from './fixtures.js';

// notification.sent (SPEC.md section 4): the record of an escalation's
// delivery, signed by the chat bridge's key (the approver role), on the
// escalation's partition; verify-chain accepts it there and refuses it from
// a key without that role.

function escalated(ledger: TestLedger): BodyOf<'notification.sent'> {
  const p = ledger.propose();
  const escalation = ledger.say('escalation.raised', { agentId: ledger.agent.principal, proposal: p.hash, level: 'emergency', reason: 'no answer before the deadline' }, ledger.gate);
  return { agentId: ledger.agent.principal, proposal: p.hash, escalation: escalation.hash, level: 'emergency', channel: 'telegram', ok: false, detail: 'NO_CHANNEL: telegram: sendMessage failed: Internal Server Error' };
}

test('a delivery record signed by the bridge (approver role) verifies', async () => {
  const ledger = new TestLedger();
  const body = escalated(ledger);
  ledger.say('notification.sent', body, ledger.approver);
  ledger.say('notification.sent', { ...body, channel: 'webhook', ok: true, detail: 'delivered' }, ledger.approver);
  ledger.sealAll();
  const report = await verifyBundle([`${ledger.lines().join('\n')}\n`], ledger.trustRoot, { workers: 0 });
  assert.equal(report.failure, null);
});

test('a delivery record signed by an agent fails with KEY_ROLE at its index', async () => {
  const ledger = new TestLedger();
  const forged = ledger.say('notification.sent', { ...escalated(ledger), ok: true, detail: 'delivered' }, ledger.agent);
  ledger.sealAll();
  const report = await verifyBundle([`${ledger.lines().join('\n')}\n`], ledger.trustRoot, { workers: 0 });
  assert.deepEqual([report.failure?.code, report.failure?.partition, report.failure?.index], ['KEY_ROLE', forged.entry.partition, forged.entry.index]);
});
