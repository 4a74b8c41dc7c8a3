import type { Signer } from '@agent-ledger/core';
import type { ReasonCode } from '@agent-ledger/refusals';
import type { LedgerBuilder } from './ledger.js';

/** Refusal codes the scenario uses, in rotation. */
export const REASONS: readonly ReasonCode[] = ['GRANT_MISSING', 'POLICY_VIOLATION', 'RATE_LIMIT', 'HUMAN_DENIED', 'TIMEOUT'];

/**
 * A deterministic mix of every statement type over `rounds` rounds: grants
 * proposed, co-signed, derived, revoked (with their derived grants) and
 * re-authorised (co-signed or not); keys registered and revoked;
 * proposals allowed, blocked, confirmed by humans, denied or timed out;
 * intake rejections. Used by the rebuild test and the benchmark.
 */
export function buildScenario(ledger: LedgerBuilder, rounds: number, newSigner: (principal: string) => Signer): void {
  const grants: { id: string; hash: string }[] = [];
  for (let round = 0; round < rounds; round++) {
    const agent = ledger.agent(round);
    if (round % 10 === 0) {
      const key = newSigner(`service:worker-${round}`);
      ledger.say('key.registered', { keyId: key.keyId, principal: key.principal, roles: ['service'] }, ledger.admin);
      if (round % 20 === 0) ledger.say('key.revoked', { keyId: key.keyId, reason: 'rotated' }, ledger.admin2);
    }
    if (round % 4 === 0) {
      const id = `grant-${round}`;
      const grant = ledger.proposeGrant(id, agent, round % 8 === 0 ? ledger.admin : ledger.admin2, { scope: `scope-${round}` });
      grants.push({ id, hash: grant.hash });
      if (round % 12 !== 4) ledger.cosignGrant(id, grant.hash, round % 8 === 0 ? ledger.admin2 : ledger.admin);
      if (round % 16 === 8) {
        // A grant derived from it (same operation, lower tier, shorter window), and one derived from that, left unsigned:
        // a revocation of the root ends both.
        const child = ledger.proposeGrant(`${id}-child`, agent, ledger.admin2, { scope: `scope-${round}`, tier: 0, parentGrantId: id, expiresAt: '2026-11-20T00:00:00.000Z' });
        ledger.cosignGrant(`${id}-child`, child.hash, ledger.admin);
        ledger.proposeGrant(`${id}-grandchild`, agent, ledger.admin, { scope: `scope-${round}`, tier: 0, parentGrantId: `${id}-child`, expiresAt: '2026-11-10T00:00:00.000Z' });
      }
    }
    if (round % 9 === 0 && grants.length > 2) {
      const old = grants[round % grants.length];
      if (old !== undefined) ledger.say('grant.revoked', { grantId: old.id, reason: 'expired policy' }, ledger.admin);
    }
    if (round % 11 === 0 && grants.length > 0) {
      const last = grants[grants.length - 1];
      if (last !== undefined) {
        const reauthorization = ledger.say('grant.reauthorized', { grantId: last.id, grant: last.hash, expiresAt: '2027-02-01T00:00:00.000Z' }, ledger.admin2);
        // Every other re-authorisation is co-signed (takes effect); the rest wait.
        if (round % 22 === 0) ledger.cosignGrant(last.id, reauthorization.hash, ledger.admin);
      }
    }

    const proposal = ledger.propose(agent, { scope: `round-${round}`, args: { amountUsd: round * 10 } });
    const tier = round % 5;
    ledger.classify(agent, proposal.hash, tier, round % 7 === 0 ? 0.25 : round * 3);
    const reason = REASONS[round % REASONS.length] as ReasonCode;
    switch (round % 5) {
      case 0:
        ledger.decide(agent, proposal.hash, 'allow', { tier });
        break;
      case 1:
        ledger.decide(agent, proposal.hash, 'block', { tier, code: reason });
        ledger.refuse(agent, proposal.hash, reason, `round ${round}`);
        break;
      case 2: {
        ledger.decide(agent, proposal.hash, 'verify_first', { tier });
        const request = ledger.requestConfirmation(agent, proposal.hash, { approvalsRequired: round % 2 === 0 ? 2 : 1 });
        ledger.respond(agent, proposal.hash, request.hash, 'approve', ledger.approver);
        ledger.respond(agent, proposal.hash, request.hash, 'approve', ledger.approver2);
        ledger.decide(agent, proposal.hash, 'allow', { tier });
        break;
      }
      case 3: {
        ledger.decide(agent, proposal.hash, 'verify_first', { tier });
        const request = ledger.requestConfirmation(agent, proposal.hash);
        ledger.respond(agent, proposal.hash, request.hash, 'deny', ledger.approver2);
        ledger.decide(agent, proposal.hash, 'deny', { tier, code: 'HUMAN_DENIED' });
        ledger.refuse(agent, proposal.hash, 'HUMAN_DENIED', 'denied by approver:erin');
        break;
      }
      default: {
        const request = ledger.requestConfirmation(agent, proposal.hash, { deadline: new Date(ledger.clock + 5000).toISOString() });
        if (round % 3 === 0) {
          ledger.say('timeout.recorded', { agentId: agent.principal, proposal: proposal.hash, request: request.hash, deadline: new Date(ledger.clock + 4000).toISOString() }, ledger.gate);
          ledger.decide(agent, proposal.hash, 'deny', { tier, code: 'TIMEOUT' });
        } else {
          ledger.say('escalation.raised', { agentId: agent.principal, proposal: proposal.hash, level: 'notify', reason: 'no answer yet' }, ledger.gate);
        }
        break;
      }
    }
    if (round % 13 === 0) {
      ledger.say('intake.rejected', { agentId: agent.principal, code: 'SCHEMA_INVALID', detail: `bad field ${round}`, input: '0'.repeat(64) }, ledger.sequencer);
    }
  }
}
