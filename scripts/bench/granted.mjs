// BENCH_TRAFFIC=granted: the bench agent's operation is covered by an exact, active allow grant (four-eyes:
// proposed by one admin, co-signed by another), so the gate settles each proposal alone (precedence 6, no
// pre-screen). The default traffic (routine calls below the threshold) is pre-screened by the gate worker.
import { LedgerClient } from '@agent-ledger/client';

/** The traffic the bench offers: `routine` (default) or `granted`. */
export const TRAFFIC = process.env.BENCH_TRAFFIC ?? 'routine';
if (TRAFFIC !== 'routine' && TRAFFIC !== 'granted') throw new Error(`BENCH_TRAFFIC: routine or granted, got ${TRAFFIC}`);

/**
 * With BENCH_TRAFFIC=granted, writes an allow grant for `op` (agentId, actionType, targetResource, recipient,
 * scope) and waits until `propose()` (a proposal on it, answered with its verified decision) is allowed by it.
 */
export async function grantWhenAsked(home, apiUrl, op, propose) {
  if (TRAFFIC !== 'granted') return;
  const admin = (name) => new LedgerClient({ baseUrl: apiUrl, signer: home.key(name), deciderKeys: [home.key('gate').keyId] });
  const alice = admin('admin-alice');
  const bob = admin('admin-bob');
  const now = Date.now();
  const proposed = await alice.submit(alice.sign('grant.proposed', { grantId: 'bench-allow', ...op, notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), effect: 'allow', tier: 1, parentGrantId: null }));
  await new Promise((r) => setTimeout(r, 500));
  await bob.submit(bob.sign('grant.cosigned', { grantId: 'bench-allow', grant: proposed.statementHash }));
  for (let i = 0; i < 100; i++) {
    const d = await propose(i);
    if (d.entry.envelope.statement.body.grantId === 'bench-allow') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('BENCH_TRAFFIC=granted: the allow grant never took effect');
}
