import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { LedgerError } from '@agent-ledger/refusals';
import { createKafkaBus } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerClient } from '@agent-ledger/client';
import { EntrySchema, createStatement, nodeEd25519, parseStrictJson, sha256Hex, signStatement, type BodyOf, type Entry, type Envelope } from '@agent-ledger/core';
import { LedgerHome, exportCommand, newSigner, rotateRootCommand, topicNames, writeKeyFile, type RunningLedger } from '@agent-ledger/ledger';

/** A root private key of the installation: `ledger init` writes them apart from it, to be moved offline. */
function rootKey(home: LedgerHome, n: number): string {
  return join(LedgerHome.defaultRootKeysDir(home.dir), `root-${n}.key`);
}
import { clientFor, eventually, freshHome, getJson, proposal, start, type Signer } from './live.js';

// The grant rules on the running ledger (real broker and Postgres): each
// attack is refused live, by the API with the rule's ReasonCode and, when it
// bypasses the API, by the sequencer as a signed intake.rejected entry; the
// gate never lets a revoked, unco-signed or conflicting grant allow a call;
// and the log with every refusal on it still verifies offline.

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();
/** The grant a verified decision cites. */
const grantOf = (d: { entry: Entry }): string | null => (d.entry.envelope.statement.body as BodyOf<'decision.recorded'>).grantId;
type GrantBody = BodyOf<'grant.proposed'>;

describe('grant rules, live', { timeout: 240_000 }, () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let alice: LedgerClient;
  let bob: LedgerClient;
  let billing: LedgerClient;

  before(async () => {
    home = freshHome();
    running = await start(home);
    alice = clientFor(home, running, 'admin-alice');
    bob = clientFor(home, running, 'admin-bob');
    billing = clientFor(home, running, 'agent-billing-bot');
  });
  after(async () => {
    await running?.stop();
  });

  const op = { agentId: 'agent:billing-bot', actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11' };
  const pay = (overrides: Partial<BodyOf<'proposal.submitted'>> = {}) =>
    proposal({ tool: 'payments', actionType: op.actionType, targetResource: op.targetResource, recipient: op.recipient, scope: op.scope, args: { amountUsd: 1200 }, query: 'pay the invoice', ...overrides });
  const grant = (grantId: string, overrides: Partial<GrantBody> = {}): GrantBody => ({
    grantId, ...op, notBefore: iso(Date.now() - 60_000), expiresAt: iso(Date.now() + DAY), effect: 'allow', tier: 3, parentGrantId: null, ...overrides,
  });

  /**
   * Submits an authority statement and waits until the gate's view of the
   * authority stream includes it: its own entry (the API reports the index
   * at GET /v1/statements/:id), not merely one more entry, since refusals
   * are recorded on the log too.
   */
  async function write(client: LedgerClient, envelope: Envelope): Promise<string> {
    const { statementHash } = await client.submit(envelope);
    const index = await eventually(async () => {
      const { body } = await getJson<{ status: string; index?: number }>(running, `/v1/statements/${envelope.statement.id}`);
      if (body.status === 'rejected') throw new Error(`statement ${envelope.statement.id} was rejected`);
      return body.status === 'admitted' ? body.index : undefined;
    }, 30_000, 'the statement\'s entry');
    await running.follower.waitFor((index as number) + 1);
    return statementHash;
  }

  async function refused(promise: Promise<unknown>, code: string): Promise<void> {
    await assert.rejects(promise, (err: unknown) => err instanceof LedgerError && err.code === code, `expected ${code}`);
  }

  /** A current key of each admin principal this test holds: the four eyes of key registrations (SPEC.md section 7.3). */
  const adminKeys = new Map<string, Signer>();

  /**
   * A signer registered now: authored by an admin, signed by every other
   * admin held here, by the subject's current key when it has one, and by
   * the new key itself (proof of possession).
   */
  async function registered(principal: string, roles: BodyOf<'key.registered'>['roles']): Promise<Signer> {
    if (adminKeys.size === 0) for (const name of ['admin-alice', 'admin-bob']) adminKeys.set(home.key(name).principal, home.key(name));
    const signer = newSigner(principal);
    const admins = [...adminKeys].filter(([p]) => p !== principal).map(([, key]) => key);
    const current = adminKeys.get(principal);
    const author = admins[0] as Signer;
    const statement = createStatement('key.registered', { keyId: signer.keyId, principal, roles }, author);
    await write(alice, signStatement(statement, [...admins, ...(current === undefined ? [] : [current]), signer], nodeEd25519));
    if (roles.includes('admin') && current === undefined) adminKeys.set(principal, signer);
    return signer;
  }

  type Enforcement = { proposalHash: string; outcome: string; code: string | null; grantId: string | null };
  /** The gate's first decision on a payment (a verify_first stays pending for a human; this does not wait for one). */
  async function firstDecision(body: ReturnType<typeof pay>): Promise<Enforcement> {
    const { statementHash } = await billing.propose(body);
    return eventually(async () => {
      const { body: list } = await getJson<{ records: Enforcement[] }>(running, '/v1/enforcement?agentId=agent:billing-bot&limit=50');
      return list.records.find((r) => r.proposalHash === statementHash);
    }, 30_000, 'the first decision');
  }

  const as = (signer: Signer): LedgerClient => new LedgerClient({ baseUrl: running.apiUrl as string, signer, deciderKeys: [home.key('gate').keyId] });

  test('a proposal and its co-signature sent back to back both count: the API leaves what it has not seen yet to the sequencer', async () => {
    const { statementHash } = await alice.submit(alice.sign('grant.proposed', grant('back-to-back', { targetResource: 'payments/vendors/initech', recipient: 'initech' })));
    await bob.submit(bob.sign('grant.cosigned', { grantId: 'back-to-back', grant: statementHash }));
    // Fails by timing out if the co-signature never counts.
    await eventually(async () => ((running.follower.current().state.grants.grant('back-to-back')?.proposal.effectiveAt ?? null) === null ? undefined : true), 30_000, 'the co-signed grant in force');
  });

  test('a self-grant is refused with SEPARATION_OF_DUTIES', async () => {
    await refused(alice.submit(alice.sign('grant.proposed', grant('self', { agentId: 'admin:alice' }))), 'SEPARATION_OF_DUTIES');
  });

  test('one principal with two keys counts once; the proposer never co-signs', async () => {
    await registered('admin:carol', ['admin']);
    const bob2 = as(await registered('admin:bob', ['admin']));
    const alice2 = as(await registered('admin:alice', ['admin']));
    // Tier 4 needs two co-signers under the default policy.
    const hash = await write(alice, alice.sign('grant.proposed', grant('two-keys', { tier: 4, expiresAt: iso(Date.now() + 2 * DAY) })));
    await refused(alice2.submit(alice2.sign('grant.cosigned', { grantId: 'two-keys', grant: hash })), 'SEPARATION_OF_DUTIES');
    await write(bob, bob.sign('grant.cosigned', { grantId: 'two-keys', grant: hash }));
    await refused(bob2.submit(bob2.sign('grant.cosigned', { grantId: 'two-keys', grant: hash })), 'SEPARATION_OF_DUTIES');
    const grantRow = running.follower.current().state.grants.grant('two-keys');
    assert.equal(grantRow?.proposal.effectiveAt, null, 'one distinct co-signer of two: not in force');
  });

  test('a co-signature over different bytes is refused with GRANT_MISMATCH', async () => {
    await write(alice, alice.sign('grant.proposed', grant('bytes')));
    const other = await write(alice, alice.sign('grant.proposed', grant('bytes-other', { scope: 'invoice:2026-12' })));
    await refused(bob.submit(bob.sign('grant.cosigned', { grantId: 'bytes', grant: other })), 'GRANT_MISMATCH');
  });

  test('a co-signature by a revoked key is refused with KEY_REVOKED', async () => {
    const carolKey = await registered('admin:dave', ['admin']);
    const carol = as(carolKey);
    const hash = await write(alice, alice.sign('grant.proposed', grant('revoked-cosigner')));
    await write(alice, alice.sign('key.revoked', { keyId: carolKey.keyId, reason: 'key compromised' }));
    adminKeys.delete('admin:dave');
    await refused(carol.submit(carol.sign('grant.cosigned', { grantId: 'revoked-cosigner', grant: hash })), 'KEY_REVOKED');
  });

  test('delegation: a subset is derived and allows; a widening is refused; revoking the parent ends the child', async () => {
    const parent = await write(alice, alice.sign('grant.proposed', grant('parent', { targetResource: 'payments/vendors/*', scope: 'invoice:*', expiresAt: iso(Date.now() + 5 * DAY) })));
    await write(bob, bob.sign('grant.cosigned', { grantId: 'parent', grant: parent }));
    await refused(alice.submit(alice.sign('grant.proposed', grant('wide', { parentGrantId: 'parent', scope: '*' }))), 'DELEGATION_WIDENS');
    await refused(alice.submit(alice.sign('grant.proposed', grant('long', { parentGrantId: 'parent', expiresAt: iso(Date.now() + 6 * DAY) }))), 'DELEGATION_WIDENS');
    const child = await write(alice, alice.sign('grant.proposed', grant('child', { parentGrantId: 'parent' })));
    await write(bob, bob.sign('grant.cosigned', { grantId: 'child', grant: child }));

    const allowed = await billing.proposeAndWait(pay(), 30_000);
    assert.deepEqual([allowed.outcome, grantOf(allowed)], ['allow', 'child']);
    await write(bob, bob.sign('grant.revoked', { grantId: 'parent', reason: 'vendor offboarded' }));
    const after = await firstDecision(pay());
    assert.deepEqual([after.outcome, after.code, after.grantId], ['verify_first', 'GRANT_MISSING', null], 'a grant used after its (parent\'s) revocation authorises nothing');
    await refused(bob.submit(bob.sign('grant.cosigned', { grantId: 'child', grant: child })), 'POLICY_VIOLATION');
  });

  test('a re-authorisation without a co-signature extends nothing; co-signed, it does', async () => {
    const hash = await write(alice, alice.sign('grant.proposed', grant('short', { scope: 'invoice:2026-10', expiresAt: iso(Date.now() + 2_000) })));
    await write(bob, bob.sign('grant.cosigned', { grantId: 'short', grant: hash }));
    const reauth = await write(bob, bob.sign('grant.reauthorized', { grantId: 'short', grant: hash, expiresAt: iso(Date.now() + 10 * DAY) }));
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const expired = await firstDecision(pay({ scope: 'invoice:2026-10' }));
    assert.deepEqual([expired.outcome, expired.code], ['verify_first', 'GRANT_EXPIRED']);
    await refused(bob.submit(bob.sign('grant.cosigned', { grantId: 'short', grant: reauth })), 'SEPARATION_OF_DUTIES');
    await write(alice, alice.sign('grant.cosigned', { grantId: 'short', grant: reauth }));
    const renewed = await billing.proposeAndWait(pay({ scope: 'invoice:2026-10' }), 30_000);
    assert.deepEqual([renewed.outcome, grantOf(renewed)], ['allow', 'short']);
  });

  test('conflicting grants: the block grant wins over an allow grant for the same operation', async () => {
    const scope = 'invoice:2026-09';
    const allow = await write(alice, alice.sign('grant.proposed', grant('conflict-allow', { scope })));
    await write(bob, bob.sign('grant.cosigned', { grantId: 'conflict-allow', grant: allow }));
    const block = await write(bob, bob.sign('grant.proposed', grant('conflict-block', { scope, effect: 'block' })));
    await write(alice, alice.sign('grant.cosigned', { grantId: 'conflict-block', grant: block }));
    const decision = await billing.proposeAndWait(pay({ scope }), 30_000);
    assert.deepEqual([decision.outcome, decision.code, grantOf(decision)], ['block', 'GRANT_BLOCKED', 'conflict-block']);
  });

  test('past the API, the sequencer refuses the same attack as a signed intake.rejected entry', async () => {
    const envelope = alice.sign('grant.proposed', grant('bypass', { agentId: 'admin:alice' }));
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'grant-bypass' });
    const topics = topicNames(home.config.topicPrefix);
    const raw = JSON.stringify(envelope);
    try {
      await bus.publish([{ topic: topics.intake, partition: 0, key: null, value: raw }]);
      // Other refusals are recorded on the log too: find the rejection of these exact bytes.
      const rejection = await eventually(async () => {
        for await (const record of bus.readRange(topics.authority, 0, '0')) {
          const entry = EntrySchema.parse(parseStrictJson(record.value.toString('utf8'))) as unknown as Entry;
          const body = entry.envelope.statement.body as { input?: string };
          if (entry.envelope.statement.type === 'intake.rejected' && body.input === sha256Hex(raw)) return entry;
        }
        return undefined;
      }, 30_000, 'the intake.rejected entry');
      const statement = rejection.envelope.statement;
      assert.equal(statement?.type, 'intake.rejected');
      assert.equal((statement?.body as BodyOf<'intake.rejected'>).code, 'SEPARATION_OF_DUTIES');
      assert.equal(running.follower.current().state.grants.grant('bypass'), undefined);
    } finally {
      await bus.close();
    }
  });

  test('after an admin key compromise, a root rotation revokes it and registers a replacement; the old key is refused', async () => {
    const dir = home.dir;
    const next = [1, 2, 3].map((n) => {
      const signer = newSigner(`root:next-${n}`);
      writeKeyFile(join(dir, 'keys', `root-next-${n}.key`), signer);
      return join(dir, 'keys', `root-next-${n}.key`);
    });
    const erin = newSigner('admin:erin');
    writeKeyFile(join(dir, 'keys', 'admin-erin.key'), erin);
    const code = await rotateRootCommand({
      rootKey: [rootKey(home, 1), rootKey(home, 2)],
      newRootKey: next,
      threshold: 2,
      revoke: [home.key('admin-bob').keyId],
      register: [`${join(dir, 'keys', 'admin-erin.key')}=admin`],
      reason: 'admin:bob key compromised',
      submit: true,
      api: running.apiUrl as string,
      home: dir,
    });
    assert.equal(code, 0);
    await eventually(async () => (running.follower.current().state.key(erin.keyId) === undefined ? undefined : true), 30_000, 'the rotation');
    assert.deepEqual(running.follower.current().state.roots.keys.length, 3);
    const hash = await write(alice, alice.sign('grant.proposed', grant('after-rotation', { scope: 'invoice:2026-08' })));
    await refused(bob.submit(bob.sign('grant.cosigned', { grantId: 'after-rotation', grant: hash })), 'KEY_REVOKED');
    await write(as(erin), as(erin).sign('grant.cosigned', { grantId: 'after-rotation', grant: hash }));
    const decision = await billing.proposeAndWait(pay({ scope: 'invoice:2026-08' }), 30_000);
    assert.deepEqual([decision.outcome, grantOf(decision)], ['allow', 'after-rotation']);
    // The replaced roots can no longer rotate.
    await assert.rejects(
      rotateRootCommand({ rootKey: [rootKey(home, 1), rootKey(home, 2)], newRootKey: [rootKey(home, 3)], threshold: 1, revoke: [], register: [], reason: 'take back', submit: true, api: running.apiUrl as string, home: dir }),
      (err: unknown) => err instanceof LedgerError && err.code === 'KEY_UNKNOWN',
    );
  });

  test('the log, with every refusal on it, verifies offline', async () => {
    await running.follower.waitFor(running.follower.current().size);
    const out = join(home.dir, 'grants.ndjson');
    assert.equal(await exportCommand({ out, home: home.dir }), 0);
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    assert.equal(report.failure, null, report.failure?.message);
    assert.ok(report.ok);
  });
});
