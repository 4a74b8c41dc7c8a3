import type { Signer } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';
import { RULES_LATEST, gateDecides, recordDecision, type Posted } from './replay-support.js';

// Shared by the authority-rules tests: a hand-built ledger under authority rules 2.

/** A version-2 ledger (or 3, which adds checkpoint key names): three admins, and each service with its own role. */
export function ledgerV2(options: { riskThreshold?: number; agentThreshold?: number; authorityRulesVersion?: 2 | 3 } = {}): {
  ledger: TestLedger;
  carol: Signer;
  timer: Signer;
  bridge: Signer;
} {
  const ledger = new TestLedger({ genesis: false, authorityRulesVersion: options.authorityRulesVersion ?? 2 });
  const carol = newSigner('admin:carol');
  const timer = newSigner('service:timer');
  const bridge = newSigner('bridge:chat');
  ledger.say(
    'genesis',
    {
      origin: ledger.origin,
      eventPartitions: ledger.eventPartitions,
      freshnessMs: 300_000,
      rootKeys: ledger.trustRoot.rootKeys,
      rootThreshold: 2,
      keys: [
        { keyId: ledger.admin.keyId, principal: ledger.admin.principal, roles: ['admin'] },
        { keyId: ledger.admin2.keyId, principal: ledger.admin2.principal, roles: ['admin'] },
        { keyId: carol.keyId, principal: carol.principal, roles: ['admin'] },
        { keyId: ledger.sequencer.keyId, principal: ledger.sequencer.principal, roles: ['sequencer'] },
        { keyId: ledger.gate.keyId, principal: ledger.gate.principal, roles: ['gate'] },
        { keyId: timer.keyId, principal: timer.principal, roles: ['timer'] },
        { keyId: bridge.keyId, principal: bridge.principal, roles: ['bridge'] },
        {
          keyId: ledger.agent.keyId,
          principal: ledger.agent.principal,
          roles: ['agent'],
          ...(options.agentThreshold === undefined ? {} : { riskThreshold: options.agentThreshold }),
        },
        { keyId: ledger.approver.keyId, principal: ledger.approver.principal, roles: ['approver'] },
      ],
      authorityRulesVersion: options.authorityRulesVersion ?? 2,
      ...(options.riskThreshold === undefined ? {} : { riskThreshold: options.riskThreshold }),
    },
    ledger.roots[0] as Signer,
    { extraSigners: [ledger.roots[1] as Signer] },
  );
  return { ledger, carol, timer, bridge };
}


/** The gate's first decision signed as the live gate signs it: the latest rules, named in the decision (a rules-2 ledger refuses gate rules 1). */
export function decideLatest(ledger: TestLedger, proposal: Posted, forged: Parameters<typeof recordDecision>[2] = {}, options: Parameters<typeof recordDecision>[3] = {}): ReturnType<typeof recordDecision> {
  return recordDecision(ledger, proposal, forged, { rules: RULES_LATEST, ...options });
}

/** What the live gate decides for a proposal under the latest rules. */
export function gateDecidesLatest(ledger: TestLedger, proposal: Posted): ReturnType<typeof gateDecides> {
  return gateDecides(ledger, proposal, ledger.authoritySize, { rules: RULES_LATEST });
}
