import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZERO_HASH, type Entry } from '@agent-ledger/core';
import {
  Projection,
  decisionFor,
  enforcementRecords,
  listGrants,
  listPending,
  projectionDigest,
  refusalMetrics,
  resetProjection,
} from '../src/index.js';
import { countRows, freshDatabase, type TestDatabase } from './support/database.js';
import { LedgerBuilder, newSigner } from './support/ledger.js';

let db: TestDatabase;
let projection: Projection;

before(async () => {
  db = await freshDatabase('projection');
  projection = new Projection(db.pool);
});

after(async () => {
  await db.drop();
});

beforeEach(async () => {
  await resetProjection(db.pool);
});

const TOPIC = 'ledger.entries';

/** Applies every partition of a ledger in one batch each, topic partition = ledger partition. */
async function applyAll(ledger: LedgerBuilder): Promise<void> {
  for (const p of ledger.partitions) {
    const entries = ledger.entries(p);
    await projection.apply(p, entries, { topic: TOPIC, partition: p, nextOffset: String(entries.length) });
  }
}

function only<T>(rows: readonly T[]): T {
  assert.equal(rows.length, 1);
  return rows[0] as T;
}

test('each statement type lands in its table', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 2, agents: 1 });
  const agent = ledger.agent(0);
  const extraAdmin = newSigner('admin:carol');
  ledger.say('key.registered', { keyId: extraAdmin.keyId, principal: extraAdmin.principal, roles: ['admin'] }, ledger.admin);
  ledger.say('key.revoked', { keyId: extraAdmin.keyId, reason: 'rotated' }, ledger.admin2);
  const grant = ledger.proposeGrant('g-1', agent);
  ledger.cosignGrant('g-1', grant.hash);
  const reauthorized = ledger.say('grant.reauthorized', { grantId: 'g-1', grant: grant.hash, expiresAt: '2027-01-01T00:00:00.000Z' }, ledger.admin);
  ledger.cosignGrant('g-1', reauthorized.hash, ledger.admin2);
  const other = ledger.proposeGrant('g-2', agent);
  ledger.say('grant.revoked', { grantId: 'g-2', reason: 'superseded' }, ledger.admin2);

  const proposal = ledger.propose(agent);
  ledger.classify(agent, proposal.hash, 3, 420.5);
  ledger.say(
    'screening.verdict',
    { agentId: agent.principal, proposal: proposal.hash, verdict: 'uncertain', rationale: 'large amount', model: 'screen-1', promptHash: ZERO_HASH },
    ledger.gate,
  );
  ledger.decide(agent, proposal.hash, 'verify_first', { tier: 3, risk: 420.5 });
  const request = ledger.requestConfirmation(agent, proposal.hash, { deadline: '2026-11-01T09:00:00.000Z' });
  ledger.say('escalation.raised', { agentId: agent.principal, proposal: proposal.hash, level: 'admin', reason: 'tier 3' }, ledger.gate);
  ledger.respond(agent, proposal.hash, request.hash, 'approve');
  const decision = ledger.decide(agent, proposal.hash, 'allow', { tier: 3, risk: 420.5, grantId: 'g-1', grantEntry: grant.entry.index });

  const blocked = ledger.propose(agent, { recipient: 'globex' });
  ledger.decide(agent, blocked.hash, 'block', { code: 'GRANT_MISSING' });
  const refusal = ledger.refuse(agent, blocked.hash, 'GRANT_MISSING', 'no grant for payment.send to globex');
  const timedOut = ledger.propose(agent, { recipient: 'initech' });
  const timedOutRequest = ledger.requestConfirmation(agent, timedOut.hash);
  ledger.say('timeout.recorded', { agentId: agent.principal, proposal: timedOut.hash, request: timedOutRequest.hash, deadline: '2026-11-01T10:00:00.000Z' }, ledger.gate);
  const rejected = ledger.say('intake.rejected', { agentId: agent.principal, code: 'SCHEMA_INVALID', detail: 'unknown field "x"', input: ZERO_HASH }, ledger.sequencer);

  await applyAll(ledger);
  const p = ledger.partitionOfAgent(agent);

  assert.equal(await countRows(db.pool, 'entries_seen'), ledger.size);
  const keys = await db.pool.query('SELECT key_id, principal, roles, registered_at, revoked_at FROM keys WHERE key_id = $1', [extraAdmin.keyId]);
  assert.deepEqual(keys.rows, [{ key_id: extraAdmin.keyId, principal: 'admin:carol', roles: ['admin'], registered_at: '1', revoked_at: '2' }]);
  assert.equal(await countRows(db.pool, 'keys'), 8, 'seven genesis keys and one registered');

  const grants = await listGrants(db.pool, {});
  assert.deepEqual(
    grants.map((g) => [g.grantId, g.status, g.proposedBy, g.cosignedBy, g.revokedAt, g.reauthorizedExpiresAt]),
    [
      ['g-1', 'active', 'admin:alice', 'admin:bob', null, '2027-01-01T00:00:00.000Z'],
      ['g-2', 'revoked', 'admin:alice', null, other.entry.index + 1, null],
    ],
  );
  assert.equal(grants[0]?.proposalHash, grant.hash);

  const proposals = await db.pool.query('SELECT proposal_hash, status, tier, risk, screening, partition FROM proposals ORDER BY index');
  assert.deepEqual(proposals.rows, [
    { proposal_hash: proposal.hash, status: 'allow', tier: 3, risk: 420.5, screening: 'uncertain', partition: p },
    { proposal_hash: blocked.hash, status: 'block', tier: null, risk: null, screening: null, partition: p },
    { proposal_hash: timedOut.hash, status: 'submitted', tier: null, risk: null, screening: null, partition: p },
  ]);

  const approvals = await db.pool.query('SELECT request_hash, status, answered_by, approved_by FROM pending_approvals ORDER BY index');
  assert.deepEqual(approvals.rows, [
    { request_hash: request.hash, status: 'approved', answered_by: 'approver:dana', approved_by: ['approver:dana'] },
    { request_hash: timedOutRequest.hash, status: 'timed_out', answered_by: null, approved_by: [] },
  ]);

  const records = await enforcementRecords(db.pool, { agentId: agent.principal, limit: 10 });
  assert.deepEqual(records.map((r) => r.outcome), ['block', 'allow', 'verify_first'], 'newest first');
  const final = await decisionFor(db.pool, proposal.hash);
  assert.deepEqual(final && [final.decisionHash, final.outcome, final.code, final.grantId, final.partition, final.index], [
    decision.hash,
    'allow',
    null,
    'g-1',
    p,
    decision.entry.index,
  ]);
  assert.equal((await decisionFor(db.pool, blocked.hash))?.code, 'GRANT_MISSING');
  assert.equal(await decisionFor(db.pool, timedOut.hash), null);

  const refusals = await db.pool.query('SELECT statement_hash, code, refusal, proposal_hash, input_hash FROM refusals ORDER BY index');
  assert.deepEqual(refusals.rows, [
    { statement_hash: refusal.hash, code: 'GRANT_MISSING', refusal: 'REFUSED: GRANT_MISSING: no grant for payment.send to globex', proposal_hash: blocked.hash, input_hash: null },
    { statement_hash: rejected.hash, code: 'SCHEMA_INVALID', refusal: 'REFUSED: SCHEMA_INVALID: unknown field "x"', proposal_hash: null, input_hash: ZERO_HASH },
  ]);
  const metrics = await refusalMetrics(db.pool);
  assert.deepEqual(
    metrics.map((m) => [m.code, m.count]),
    [
      ['GRANT_MISSING', 1],
      ['SCHEMA_INVALID', 1],
    ],
  );
  for (const m of metrics) assert.match(m.minute, /^2026-11-01T\d\d:\d\d:00\.000Z$/);
  assert.deepEqual(await refusalMetrics(db.pool, { sinceMinute: new Date('2030-01-01T00:00:00.000Z') }), []);

  const head = await projection.head(p);
  assert.deepEqual(head, { size: ledger.entries(p).length, head: ledger.entries(p).at(-1)?.hash, halted: null });
  assert.equal(await projection.offsetOf(TOPIC, p), String(ledger.entries(p).length));
  assert.equal(await projection.offsetOf(TOPIC, 99), null);
});

test('a grant becomes active only when a different admin principal cosigns the exact proposal', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const agent = ledger.agent(0);
  // A second key for admin:alice: the same principal with another key is still the same person.
  const aliceLaptop = newSigner('admin:alice');
  ledger.say('key.registered', { keyId: aliceLaptop.keyId, principal: aliceLaptop.principal, roles: ['admin'] }, ledger.admin2);

  const selfCosigned = ledger.proposeGrant('g-self', agent);
  ledger.cosignGrant('g-self', selfCosigned.hash, ledger.admin);
  ledger.cosignGrant('g-self', selfCosigned.hash, aliceLaptop);

  const wrongHash = ledger.proposeGrant('g-wrong', agent);
  ledger.cosignGrant('g-wrong', selfCosigned.hash, ledger.admin2);

  const good = ledger.proposeGrant('g-good', agent, ledger.admin, { notBefore: '2026-11-02T00:00:00.000Z', expiresAt: '2026-11-03T00:00:00.000Z' });
  ledger.cosignGrant('g-good', good.hash, ledger.admin2);
  const cosignedAgain = ledger.cosignGrant('g-good', good.hash, aliceLaptop);

  const byBob = ledger.proposeGrant('g-bob', agent, ledger.admin2);
  ledger.cosignGrant('g-bob', byBob.hash, aliceLaptop);

  const unknown = ledger.cosignGrant('g-none', good.hash, ledger.admin2);
  await applyAll(ledger);

  const grants = new Map((await listGrants(db.pool, { agentId: agent.principal })).map((g) => [g.grantId, g]));
  assert.equal(grants.get('g-self')?.status, 'proposed', 'self-cosigned, even with another key');
  assert.equal(grants.get('g-wrong')?.status, 'proposed', 'cosignature over another proposal');
  assert.equal(grants.get('g-good')?.status, 'active');
  assert.equal(grants.get('g-good')?.cosignedBy, 'admin:bob', 'the first valid cosignature counts');
  assert.notEqual(grants.get('g-good')?.cosignedAt, cosignedAgain.entry.index);
  assert.equal(grants.get('g-bob')?.cosignedBy, 'admin:alice');
  assert.equal(grants.size, 4, `no row for an unknown grant (${unknown.entry.index})`);

  const activeAt = async (iso: string): Promise<string[]> =>
    (await listGrants(db.pool, { activeAt: new Date(iso) })).map((g) => g.grantId);
  assert.deepEqual(await activeAt('2026-11-01T12:00:00.000Z'), ['g-bob']);
  assert.deepEqual(await activeAt('2026-11-02T12:00:00.000Z'), ['g-bob', 'g-good']);
  assert.deepEqual(await activeAt('2026-11-03T00:00:00.000Z'), ['g-bob'], 'expiry is exclusive');
  assert.deepEqual(await listGrants(db.pool, { agentId: 'agent:nobody' }), []);
});

test('a root rotation revokes and registers keys in the same entry', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const newRoots = [newSigner('root:3'), newSigner('root:4')];
  const erin = newSigner('admin:erin');
  const [first, second] = ledger.roots;
  const rotation = ledger.say(
    'root.rotated',
    {
      rootKeys: newRoots.map((r) => r.keyId),
      rootThreshold: 2,
      revokeKeys: [ledger.admin2.keyId],
      registerKeys: [{ keyId: erin.keyId, principal: erin.principal, roles: ['admin'] }],
      reason: 'admin:bob key compromised',
    },
    first as ReturnType<typeof newSigner>,
    { extraSigners: [second as ReturnType<typeof newSigner>, ...newRoots] },
  );
  await applyAll(ledger);
  const keys = await db.pool.query('SELECT principal, registered_at, revoked_at FROM keys WHERE key_id = ANY($1) ORDER BY principal', [[ledger.admin2.keyId, erin.keyId]]);
  assert.deepEqual(keys.rows, [
    { principal: 'admin:bob', registered_at: '0', revoked_at: String(rotation.entry.index) },
    { principal: 'admin:erin', registered_at: String(rotation.entry.index), revoked_at: null },
  ]);
});

test('approvals: each approver counts once, a denial settles, answers after the outcome change nothing', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const agent = ledger.agent(0);
  const twoPerson = ledger.propose(agent);
  const request = ledger.requestConfirmation(agent, twoPerson.hash, { approvalsRequired: 2, deadline: '2026-11-01T09:00:00.000Z' });
  ledger.respond(agent, twoPerson.hash, request.hash, 'approve', ledger.approver);
  ledger.respond(agent, twoPerson.hash, request.hash, 'approve', ledger.approver);
  const denied = ledger.propose(agent, { scope: 'other' });
  const deniedRequest = ledger.requestConfirmation(agent, denied.hash, { deadline: '2026-11-01T10:00:00.000Z' });
  ledger.respond(agent, denied.hash, deniedRequest.hash, 'deny', ledger.approver2);
  ledger.respond(agent, denied.hash, deniedRequest.hash, 'approve', ledger.approver);
  const open = ledger.propose(agent, { scope: 'third' });
  const openRequest = ledger.requestConfirmation(agent, open.hash, { deadline: '2026-11-01T11:00:00.000Z' });
  // A response naming the wrong proposal for the request does not count.
  ledger.respond(agent, twoPerson.hash, openRequest.hash, 'approve', ledger.approver);
  await applyAll(ledger);

  const pending = await listPending(db.pool, { limit: 10 });
  assert.deepEqual(
    pending.map((r) => [r.requestHash, r.approvedBy]),
    [
      [request.hash, ['approver:dana']],
      [openRequest.hash, []],
    ],
  );
  assert.deepEqual(
    (await listPending(db.pool, { now: new Date('2026-11-01T09:30:00.000Z'), limit: 10 })).map((r) => r.requestHash),
    [openRequest.hash],
  );
  assert.equal((await listPending(db.pool, { limit: 1 })).length, 1);
  const deniedRow = await db.pool.query('SELECT status, answered_by FROM pending_approvals WHERE request_hash = $1', [deniedRequest.hash]);
  assert.deepEqual(deniedRow.rows, [{ status: 'denied', answered_by: 'approver:erin' }]);

  // The second approver arrives in a later batch and settles the request.
  const p = ledger.partitionOfAgent(agent);
  const settled = ledger.respond(agent, twoPerson.hash, request.hash, 'approve', ledger.approver2);
  await projection.apply(p, [settled.entry], { topic: TOPIC, partition: p, nextOffset: String(ledger.entries(p).length) });
  const row = only(await db.pool.query('SELECT status, answered_by, answered_index, approved_by FROM pending_approvals WHERE request_hash = $1', [request.hash]).then((r) => r.rows));
  assert.deepEqual(row, { status: 'approved', answered_by: 'approver:erin', answered_index: String(settled.entry.index), approved_by: ['approver:dana', 'approver:erin'] });
  await assert.rejects(listPending(db.pool, { limit: 0 }), (err: unknown) => (err as { code?: unknown }).code === 'SCHEMA_INVALID');
});

test('redelivery of applied entries is a no-op, in whole batches or overlapping ones', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 2 });
  for (let i = 0; i < 12; i++) {
    const agent = ledger.agent(i);
    const proposal = ledger.propose(agent, { scope: `s${i}` });
    ledger.decide(agent, proposal.hash, i % 3 === 0 ? 'block' : 'allow', { code: i % 3 === 0 ? 'POLICY_VIOLATION' : null });
    if (i % 3 === 0) ledger.refuse(agent, proposal.hash, 'POLICY_VIOLATION', `rule ${i}`);
  }
  const events = ledger.entries(1);
  await applyAll(ledger);
  const digest = await projectionDigest(db.pool);

  const again = await projection.apply(1, events, { topic: TOPIC, partition: 1, nextOffset: String(events.length) });
  assert.deepEqual(again, { applied: 0, skipped: events.length, size: events.length, head: events.at(-1)?.hash });
  assert.equal(await projectionDigest(db.pool), digest, 'a whole redelivered batch changes nothing');

  await resetProjection(db.pool);
  await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
  let applied = 0;
  for (let start = 0; start < events.length; start += 5) {
    // Each batch starts 3 entries back, as after a consumer restart from an older commit.
    const from = Math.max(0, start - 3);
    const result = await projection.apply(1, events.slice(from, start + 5), { topic: TOPIC, partition: 1, nextOffset: String(Math.min(start + 5, events.length)) });
    assert.equal(result.skipped, start - from);
    applied += result.applied;
  }
  assert.equal(applied, events.length);
  assert.equal(await projectionDigest(db.pool), digest, 'overlapping batches fold to the same tables');

  // An older offset never moves the stored one back.
  await projection.apply(1, events.slice(0, 2), { topic: TOPIC, partition: 1, nextOffset: '2' });
  assert.equal(await projection.offsetOf(TOPIC, 1), String(events.length));
});

test('an empty batch stores its offset and nothing else; bad source offsets are refused', { timeout: 30_000 }, async () => {
  const result = await projection.apply(2, [] as Entry[], { topic: TOPIC, partition: 2, nextOffset: '41' });
  assert.deepEqual(result, { applied: 0, skipped: 0, size: 0, head: ZERO_HASH });
  assert.equal(await projection.offsetOf(TOPIC, 2), '41');
  assert.equal(await countRows(db.pool, 'partition_heads'), 0);
  assert.deepEqual(await projection.head(2), { size: 0, head: ZERO_HASH, halted: null });
  for (const nextOffset of ['-1', '1.5', '01', '', '9223372036854775808', 'x']) {
    await assert.rejects(projection.apply(2, [], { topic: TOPIC, partition: 2, nextOffset }), (err: unknown) => (err as { code?: unknown }).code === 'SCHEMA_INVALID', nextOffset);
  }
  await assert.rejects(projection.apply(-1, [], { topic: TOPIC, partition: 0, nextOffset: '0' }), (err: unknown) => (err as { code?: unknown }).code === 'SCHEMA_INVALID');
  await assert.rejects(projection.apply(0, [], { topic: '', partition: 0, nextOffset: '0' }), (err: unknown) => (err as { code?: unknown }).code === 'SCHEMA_INVALID');
  await projection.apply(2, [], { topic: TOPIC, partition: 2, nextOffset: '9223372036854775807' });
  assert.equal(await projection.offsetOf(TOPIC, 2), '9223372036854775807');
});
