// The in-process baseline the live benches compare against: one decide() of
// the pure gate plus signing its decision statement, p50 in ms over 2,500
// timed calls after 500 warm-up calls. `body(i)` gives the i-th proposal body
// (distinct commands, so the gate's command memo does not answer).
import * as core from '@agent-ledger/core';
import { decide, initialState } from '@agent-ledger/gate';
import { newSigner } from '@agent-ledger/ledger';

export function decideAndSignP50(body) {
  const signer = newSigner('service:gate');
  const state = initialState();
  const times = [];
  for (let i = 0; i < 3000; i++) {
    const t = performance.now();
    const decision = decide({ now: Date.now(), channel: 'api', context: {}, proposal: { agentId: 'agent:build-bot', ...body(i) } }, state);
    const statement = core.createStatement('decision.recorded', { agentId: 'agent:build-bot', proposal: 'a'.repeat(64), outcome: decision.outcome, code: decision.code, tier: decision.tier, risk: decision.risk, authorityIndex: 1, grantId: null, grantEntry: null, rulesVersion: 2 }, signer);
    core.signStatement(statement, [signer], core.nodeEd25519);
    if (i >= 500) times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
