import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { signedFetch, type LedgerClient } from '@agent-ledger/client';
import type { BodyOf, Envelope } from '@agent-ledger/core';
import { projectionDigest, resetProjection } from '@agent-ledger/store';
import { Projector, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { assertJsonSuccess } from './cli-json-shape.js';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// A grant's paper trail on the live ledger: proposed by one admin, co-signed
// by another, re-authorised and that re-authorisation co-signed, used by an
// allowed decision, delegated, then revoked with its derived grant. Checked
// through GET /v1/grants/:grantId/trail, GET /v1/decisions/:proposal/trail
// and `ledger grants trail`, and rebuilt from offset 0 to the same tables.

const run = promisify(execFile);
const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

/** The built CLI, asynchronously: the API it queries runs in this process. */
async function ledger(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { cwd: repoRoot, encoding: 'utf8' });
    return { status: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

interface TrailEvent {
  readonly authorityIndex: number;
  readonly kind: string;
  readonly principal: string;
  readonly statementHash: string;
  readonly namesHash: string | null;
  readonly tookEffect: boolean;
  readonly effectiveAt: number | null;
  readonly cosignedBy: string[];
}

interface Trail {
  readonly grant: { grantId: string; status: string; cosignedBy: string | null; reauthorizedExpiresAt: string | null; reauthorizedAt: number | null; revokedVia: string | null };
  readonly events: TrailEvent[];
  readonly parents: { grant: { grantId: string }; events: TrailEvent[] }[];
  readonly derived: string[];
  readonly decisions: { total: number; byOutcome: Record<string, number>; records: { proposalHash: string; outcome: string; partition: number; index: number; sequencedAt: string }[] };
}

describe('grant paper trail', () => {
  let home: LedgerHome;
  let running: RunningLedger;

  before(async () => {
    home = freshHome();
    running = await start(home);
  });
  after(async () => {
    await running?.stop();
  });

  /** Submits an authority statement and waits until the API's view of the authority stream includes it (the next write is checked against it). */
  async function write(client: LedgerClient, envelope: Envelope): Promise<{ statementHash: string }> {
    const before = running.follower.current().size;
    const submitted = await client.submit(envelope);
    await running.follower.waitFor(before + 1);
    return submitted;
  }

  test('proposed, co-signed, re-authorised (co-signed), used, delegated, revoked: the API and the CLI tell it', { timeout: 120_000 }, async () => {
    const alice = clientFor(home, running, 'admin-alice');
    const bob = clientFor(home, running, 'admin-bob');
    const agent = clientFor(home, running, 'agent-build-bot');
    const now = Date.now();
    const operation = { agentId: 'agent:build-bot', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace' };
    const grant: BodyOf<'grant.proposed'> = {
      grantId: 'trail-root', ...operation, notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 10 * 86_400_000).toISOString(), effect: 'allow', tier: 2, parentGrantId: null,
    };
    const proposed = await write(alice, alice.sign('grant.proposed', grant));
    const cosigned = await write(bob, bob.sign('grant.cosigned', { grantId: 'trail-root', grant: proposed.statementHash }));
    const until = new Date(now + 20 * 86_400_000).toISOString();
    const reauthorized = await write(bob, bob.sign('grant.reauthorized', { grantId: 'trail-root', grant: proposed.statementHash, expiresAt: until }));
    const reauthCosigned = await write(alice, alice.sign('grant.cosigned', { grantId: 'trail-root', grant: reauthorized.statementHash }));
    const trailOf = async (grantId: string): Promise<{ status: number; body: Trail }> => getJson<Trail>(running, `/v1/grants/${encodeURIComponent(grantId)}/trail`);
    await eventually(async () => {
      const { status, body } = await trailOf('trail-root');
      return status === 200 && body.grant.reauthorizedAt !== null ? body : undefined;
    }, 30_000, 'the co-signed re-authorisation in the projection');

    // The grant authorises a call: the decision cites it.
    const decision = await agent.proposeAndWait(proposal(), 30_000);
    const decided = decision.entry.envelope.statement.body as BodyOf<'decision.recorded'>;
    assert.deepEqual([decision.outcome, decided.grantId], ['allow', 'trail-root']);
    const proposalHash = decided.proposal;

    // A grant derived from it, in force, then the root revoked: both end at the same index.
    const child = await write(alice, alice.sign('grant.proposed', { ...grant, grantId: 'trail-child', tier: 1, expiresAt: new Date(now + 5 * 86_400_000).toISOString(), parentGrantId: 'trail-root' }));
    await write(bob, bob.sign('grant.cosigned', { grantId: 'trail-child', grant: child.statementHash }));
    await eventually(async () => ((await trailOf('trail-child')).body.grant?.status === 'active' ? true : undefined), 30_000, 'the derived grant active');
    const trail = (await trailOf('trail-root')).body;

    const [p, c, r, rc] = trail.events;
    assert.deepEqual(
      trail.events.map((e) => [e.kind, e.principal, e.statementHash, e.tookEffect]),
      [
        ['proposed', 'admin:alice', proposed.statementHash, true],
        ['cosigned', 'admin:bob', cosigned.statementHash, true],
        ['reauthorized', 'admin:bob', reauthorized.statementHash, true],
        ['cosigned', 'admin:alice', reauthCosigned.statementHash, true],
      ],
    );
    assert.ok(p && c && r && rc);
    assert.deepEqual([p.effectiveAt, p.cosignedBy, c.namesHash], [c.authorityIndex, ['admin:bob'], proposed.statementHash]);
    assert.deepEqual([r.effectiveAt, r.cosignedBy, rc.namesHash], [rc.authorityIndex, ['admin:alice'], reauthorized.statementHash]);
    assert.ok(p.authorityIndex < c.authorityIndex && c.authorityIndex < r.authorityIndex && r.authorityIndex < rc.authorityIndex, 'ledger order');
    assert.deepEqual([trail.grant.status, trail.grant.cosignedBy, trail.grant.reauthorizedExpiresAt, trail.grant.reauthorizedAt], ['active', 'admin:bob', until, rc.authorityIndex]);
    assert.deepEqual([trail.parents, trail.derived], [[], ['trail-child']]);
    assert.deepEqual([trail.decisions.total, trail.decisions.byOutcome], [1, { allow: 1 }]);
    assert.deepEqual(trail.decisions.records.map((d) => [d.proposalHash, d.outcome, d.partition, d.index]), [[proposalHash, 'allow', decision.entry.partition, decision.entry.index]]);
    const childTrail = (await trailOf('trail-child')).body;
    assert.deepEqual(childTrail.parents.map((s) => [s.grant.grantId, s.events.length]), [['trail-root', 4]]);

    const { status: decisionStatus, body: behind } = await getJson<{ proposal: string; decision: { grantId: string }; chain: { grant: { grantId: string } }[] }>(running, `/v1/decisions/${proposalHash}/trail`);
    assert.equal(decisionStatus, 200);
    assert.deepEqual([behind.proposal, behind.decision.grantId, behind.chain.map((s) => s.grant.grantId)], [proposalHash, 'trail-root', ['trail-root']]);

    // The CLI: one line per event, then parents, derived grants and decisions.
    const api = running.apiUrl as string;
    const human = await ledger('grants', 'trail', 'trail-root', '--api', api, '--home', home.dir);
    assert.equal(human.status, 0, human.stderr);
    const lines = human.stdout.split('\n').map((l) => l.trim());
    for (const line of [
      `#${p.authorityIndex} proposed by admin:alice`,
      `#${c.authorityIndex} co-signed by admin:bob (in force)`,
      `#${r.authorityIndex} re-authorised by admin:bob until ${until}`,
      `#${rc.authorityIndex} co-signed re-authorisation #${r.authorityIndex} by admin:alice (in force: ends ${until})`,
      'parents: none (a root grant)',
      'derived: trail-child',
      'decisions: 1 cited it (allow 1)',
      `p${decision.entry.partition}#${decision.entry.index} allow proposal ${proposalHash.slice(0, 16)} at ${decision.entry.sequencedAt}`,
    ]) {
      assert.ok(lines.includes(line), `${line}\n in:\n${human.stdout}`);
    }
    const json = await ledger('grants', 'trail', 'trail-root', '--api', api, '--home', home.dir, '--json');
    assert.deepEqual(assertJsonSuccess(json, 'grants trail --json'), { ok: true, ...trail }, '--json prints what the API answered, with "ok":true');
    const chain = await ledger('grants', 'trail', '--decision', proposalHash, '--api', api, '--home', home.dir);
    assert.equal(chain.status, 0, chain.stderr);
    assert.match(chain.stdout, new RegExp(`^decision on proposal ${proposalHash.slice(0, 16)}: allow, tier \\d, `));
    assert.match(chain.stdout, new RegExp(`^cited grant trail-root \\(entry #${p.authorityIndex}\\): allow shell\\.exec for agent:build-bot, tier 2, active$`, 'm'));
    const childLines = await ledger('grants', 'trail', 'trail-child', '--api', api, '--home', home.dir);
    assert.match(childLines.stdout, /^parent trail-root: allow shell\.exec for agent:build-bot, tier 2, active$/m);

    // Revoking the root ends the derived grant at the same index, through its ancestor.
    const revoked = await write(alice, alice.sign('grant.revoked', { grantId: 'trail-root', reason: 'build host retired' }));
    const ended = await eventually(async () => {
      const body = (await trailOf('trail-child')).body;
      return body.grant.status === 'revoked' ? body : undefined;
    }, 30_000, 'the derived grant revoked');
    const cascade = ended.events.at(-1);
    assert.deepEqual([cascade?.kind, cascade?.principal, cascade?.statementHash, ended.grant.revokedVia], ['revoked_via_ancestor', 'admin:alice', revoked.statementHash, 'trail-root']);
    const revokedLine = await ledger('grants', 'trail', 'trail-child', '--api', api, '--home', home.dir);
    assert.ok(revokedLine.stdout.includes(`#${cascade?.authorityIndex} revoked with ancestor trail-root by admin:alice: build host retired`), revokedLine.stdout);

    // Bad input: 400 BAD_ARGUMENT; unknown: 404 NOT_FOUND (operational codes, not refusals); the CLI says the same with its code, and BAD_ARGUMENT for its own bad arguments, no stack trace.
    const refusal = async (path: string): Promise<[number, string]> => {
      const response = await signedFetch(home.key('admin-alice'))(`${api}${path}`);
      return [response.status, ((await response.json()) as { error?: { code: string } }).error?.code ?? 'none'];
    };
    assert.deepEqual(await refusal('/v1/grants/no-such-grant/trail'), [404, 'NOT_FOUND']);
    assert.deepEqual(await refusal(`/v1/grants/${encodeURIComponent('a/b c')}/trail`), [404, 'NOT_FOUND'], 'any grant id, percent-encoded');
    assert.deepEqual(await refusal(`/v1/grants/${'x'.repeat(257)}/trail`), [400, 'BAD_ARGUMENT']);
    assert.deepEqual(await refusal('/v1/grants/trail-root/trail?limit=0'), [400, 'BAD_ARGUMENT']);
    assert.deepEqual(await refusal('/v1/decisions/not-a-hash/trail'), [400, 'BAD_ARGUMENT']);
    assert.deepEqual(await refusal(`/v1/decisions/${'0'.repeat(64)}/trail`), [404, 'NOT_FOUND']);
    const unknown = await ledger('grants', 'trail', 'no-such-grant', '--api', api, '--home', home.dir);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /^ledger: NOT_FOUND: /);
    for (const args of [['grants', 'trail', '--decision', 'xyz', '--api', api], ['grants', 'trail', '--api', api], ['grants', 'trail', 'x', '--api', 'not a url']]) {
      const bad = await ledger(...args);
      assert.equal(bad.status, 2, args.join(' '));
      assert.match(bad.stderr, /^ledger: BAD_ARGUMENT: /, args.join(' '));
      assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
    }
    const help = await ledger('grants', 'trail', '--help');
    assert.match(help.stdout, /Usage: ledger grants trail/);

    const openapi = (await (await fetch(`${api}/openapi.json`)).json()) as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    assert.ok(openapi.paths['/v1/grants/{grantId}/trail'] && openapi.paths['/v1/decisions/{proposal}/trail'] && openapi.components.schemas.GrantTrail);
  });

  test('a rebuild from offset 0 gives the same grant tables and trail', { timeout: 120_000 }, async () => {
    const pool = new pg.Pool({ connectionString: home.config.pgUrl });
    try {
      await running.projector?.stop();
      const topics = topicNames(home.config.topicPrefix);
      const catchUp = new Projector(running.bus, pool, home.config.eventPartitions, topics);
      await catchUp.start();
      await catchUp.stop();
      const digest = await projectionDigest(pool);
      const events = await pool.query('SELECT count(*)::int AS n FROM grant_events');
      assert.ok((events.rows[0] as { n: number }).n >= 8, 'the first test wrote a trail');
      await resetProjection(pool);
      const rebuild = new Projector(running.bus, pool, home.config.eventPartitions, topics);
      await rebuild.start();
      await rebuild.stop();
      assert.equal(await projectionDigest(pool), digest);
    } finally {
      await pool.end();
    }
  });
});
