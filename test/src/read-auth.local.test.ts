import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { LedgerClient, signRead, signedFetch } from '@agent-ledger/client';
import { createStatement, nodeEd25519, signStatement, type Signer } from '@agent-ledger/core';
import { LedgerHome, newSigner, type RunningLedger } from '@agent-ledger/ledger';
import { freshDevHome, startDev } from './dev-mode.js';
import { repoRoot } from './fixtures.js';
import { eventually, proposal } from './live.js';

// Reads of the API from an attacker's side: without a signature nothing but
// the public routes answers (401); a principal reads only within its role
// (403); a captured signed read cannot be replayed, a stale one is refused,
// a revoked key reads nothing; approvers never read exports.

interface Answer {
  readonly status: number;
  readonly body: { error?: { code: string; message: string; retryable: boolean } } & Record<string, unknown>;
}

const METRICS_TOKEN = 'scrape-token-0123456789abcdef';

describe('signed reads and role scopes', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let base: string;
  let billing: LedgerClient;
  let decided: { proposal: string; statementId: string; partition: number; index: number };

  /** One GET: unsigned (`as` null), signed by a key, or with the headers given. */
  async function get(path: string, as: Signer | null, headers: Record<string, string> = {}): Promise<Answer> {
    const signed: Record<string, string> = as === null ? {} : { authorization: signRead(as, 'GET', path) };
    const response = await fetch(`${base}${path}`, { headers: { ...signed, ...headers } });
    const text = await response.text();
    let body: Answer['body'];
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      body = { text } as Answer['body'];
    }
    return { status: response.status, body };
  }

  function assertCode(answer: Answer, status: number, code: string, what: string): void {
    assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    assert.equal(answer.body.error?.code, code, what);
    assert.equal(typeof answer.body.error?.message, 'string', what);
    assert.equal(answer.body.error?.retryable, false, what);
  }

  before(async () => {
    const fresh = freshDevHome();
    const tokenFile = join(fresh.dir, 'metrics.token');
    writeFileSync(tokenFile, `${METRICS_TOKEN}\n`, { mode: 0o600 });
    const config = JSON.parse(readFileSync(join(fresh.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(fresh.dir, 'config.json'), JSON.stringify({ ...config, api: { metricsTokenFile: tokenFile } }));
    home = LedgerHome.open(fresh.dir);
    running = await startDev(home, ['api', 'sequencer', 'gate', 'projector', 'timer']);
    base = running.apiUrl as string;
    billing = new LedgerClient({ baseUrl: base, signer: home.key('agent-billing-bot'), deciderKeys: [home.key('gate').keyId] });
    const envelope = billing.sign('proposal.submitted', { ...proposal(), agentId: 'agent:billing-bot' });
    const submitted = await billing.submit(envelope);
    await billing.awaitDecision(submitted.statementHash, 30_000);
    const admitted = await eventually(async () => {
      const r = await get(`/v1/statements/${envelope.statement.id}`, home.key('agent-billing-bot'));
      return r.body['status'] === 'admitted' ? r.body : undefined;
    }, 30_000, 'the proposal admitted');
    decided = { proposal: submitted.statementHash, statementId: envelope.statement.id, partition: admitted['partition'] as number, index: admitted['index'] as number };
    // The entry's receipt is served once a checkpoint covers it.
    await eventually(async () => ((await get(`/v1/receipts/${decided.partition}/${decided.index}`, home.key('admin-alice'))).status === 200 ? true : undefined), 30_000, 'the receipt');
  });
  after(async () => {
    await running?.stop();
  });

  test('without a signature: receipts, proposals, decisions, statuses, the queue, exports, /metrics and the dashboard are 401 UNAUTHENTICATED', async () => {
    const paths = [
      `/v1/receipts/${decided.partition}/${decided.index}`,
      `/v1/proposals/${decided.proposal}`,
      `/v1/decisions/${decided.proposal}`,
      `/v1/decisions/${decided.proposal}/trail`,
      `/v1/statements/${decided.statementId}`,
      '/v1/pending',
      '/v1/pending/stream',
      '/v1/grants',
      '/v1/enforcement',
      '/v1/refusals/metrics',
      '/v1/checkpoints/latest?partition=1',
      '/v1/consistency?partition=1&from=1',
      '/metrics',
      '/dashboard',
    ];
    for (const path of paths) assertCode(await get(path, null), 401, 'UNAUTHENTICATED', path);
    // Garbage in the header is the same 401, never a 500.
    for (const header of ['Ledger-Ed25519', 'Ledger-Ed25519 keyId=zz', `Ledger-Ed25519 keyId=${'a'.repeat(64)},ts=1,nonce=${'b'.repeat(32)},sig=${'A'.repeat(86)}==`, 'Basic YWRtaW46YWRtaW4=', `Bearer ${METRICS_TOKEN}`]) {
      assertCode(await get('/v1/pending', null, { authorization: header }), 401, 'UNAUTHENTICATED', header.slice(0, 30));
    }
    // The public routes: health, the trust document a client bootstraps from, the API description, the pages' files.
    for (const path of ['/healthz', '/readyz', '/v1/trust', '/openapi.json', '/', '/approve', '/approve/app.js', '/dashboard.css']) {
      assert.equal((await get(path, null)).status, 200, path);
    }
    assert.equal((await get('/readyz', null)).body['readAuth'], 'signed');
  });

  test("agent A reading agent B's proposal, decision, receipt or statement status is 403 FORBIDDEN; B reads its own", async () => {
    const ops = home.key('agent-ops-bot');
    const own = home.key('agent-billing-bot');
    const paths = [`/v1/proposals/${decided.proposal}`, `/v1/decisions/${decided.proposal}`, `/v1/receipts/${decided.partition}/${decided.index}`, `/v1/statements/${decided.statementId}`];
    for (const path of paths) {
      assertCode(await get(path, ops), 403, 'FORBIDDEN', `ops-bot ${path}`);
      assert.equal((await get(path, own)).status, 200, `billing-bot ${path}`);
    }
    // Listings: an agent reads its own rows only, never another's or all of them.
    assert.equal((await get('/v1/enforcement?agentId=agent%3Aops-bot', ops)).status, 200);
    assertCode(await get('/v1/enforcement?agentId=agent%3Abilling-bot', ops), 403, 'FORBIDDEN', 'enforcement of another agent');
    assertCode(await get('/v1/enforcement', ops), 403, 'FORBIDDEN', 'all enforcement records');
    assertCode(await get('/v1/grants', ops), 403, 'FORBIDDEN', 'the grant table');
    assertCode(await get('/v1/pending', ops), 403, 'FORBIDDEN', 'the approval queue');
    assertCode(await get('/metrics', ops), 403, 'FORBIDDEN', '/metrics');
    // The SDK signs its reads with the key it holds: its own decision comes back verified.
    const verified = await billing.awaitDecision(decided.proposal, 10_000);
    assert.equal(verified.proposal, decided.proposal);
    const stranger = new LedgerClient({ baseUrl: base, signer: ops, deciderKeys: [home.key('gate').keyId] });
    await assert.rejects(stranger.awaitDecision(decided.proposal, 5_000), (err: unknown) => (err as { code?: string }).code === 'FORBIDDEN');
  });

  test('a replayed, stale, future, re-targeted or badly signed read is 401; an unknown key is 401', async () => {
    const admin = home.key('admin-alice');
    const path = '/v1/pending';
    const header = signRead(admin, 'GET', path);
    assert.equal((await get(path, null, { authorization: header })).status, 200, 'first use');
    assertCode(await get(path, null, { authorization: header }), 401, 'UNAUTHENTICATED', 'replayed');
    assertCode(await get(path, null, { authorization: signRead(admin, 'GET', path, { nowMs: Date.now() - 120_000 }) }), 401, 'UNAUTHENTICATED', 'stale');
    assertCode(await get(path, null, { authorization: signRead(admin, 'GET', path, { nowMs: Date.now() + 120_000 }) }), 401, 'UNAUTHENTICATED', 'future');
    // Signed for one target, sent to another (another query, another method's signature).
    assertCode(await get('/v1/pending?limit=1', null, { authorization: signRead(admin, 'GET', path) }), 401, 'UNAUTHENTICATED', 'other query');
    assertCode(await get(path, null, { authorization: signRead(admin, 'POST', path) }), 401, 'UNAUTHENTICATED', 'other method');
    // Another key's signature under the admin's key id.
    const forged = signRead({ ...home.key('agent-ops-bot'), keyId: admin.keyId }, 'GET', path);
    assertCode(await get(path, null, { authorization: forged }), 401, 'UNAUTHENTICATED', 'bad signature');
    assertCode(await get(path, newSigner('admin:mallory')), 401, 'UNAUTHENTICATED', 'unknown key');
  });

  test('a key revoked on the authority stream reads nothing more', async () => {
    const admin = home.key('admin-alice');
    const agent = newSigner('agent:short-lived');
    const adminClient = new LedgerClient({ baseUrl: base, signer: admin, deciderKeys: [] });
    const registration = signStatement(createStatement('key.registered', { keyId: agent.keyId, principal: agent.principal, roles: ['agent'] }, admin), [admin, agent], nodeEd25519);
    await adminClient.submit(registration);
    await eventually(async () => (running.follower.current().state.key(agent.keyId) !== undefined ? true : undefined), 30_000, 'the key registered');
    assert.equal((await get('/v1/enforcement?agentId=agent%3Ashort-lived', agent)).status, 200, 'registered: reads its own');
    await adminClient.submit(adminClient.sign('key.revoked', { keyId: agent.keyId, reason: 'laptop lost' }));
    await eventually(async () => (running.follower.current().state.key(agent.keyId)?.revokedAt !== undefined ? true : undefined), 30_000, 'the key revoked');
    assertCode(await get('/v1/enforcement?agentId=agent%3Ashort-lived', agent), 401, 'UNAUTHENTICATED', 'revoked key');
  });

  test('an approver reads the queue and the proposals put to it, never exports, /metrics or the dashboard', async () => {
    const dana = home.key('approver-dana');
    assert.equal((await get('/v1/pending', dana)).status, 200);
    for (const path of ['/v1/grants', '/v1/enforcement', '/v1/refusals/metrics', `/v1/decisions/${decided.proposal}/trail`, '/v1/grants/any/trail', '/metrics', '/dashboard']) {
      assertCode(await get(path, dana), 403, 'FORBIDDEN', `approver ${path}`);
    }
    // The routine proposal was never put to a human: not the approver's to read.
    assertCode(await get(`/v1/proposals/${decided.proposal}`, dana), 403, 'FORBIDDEN', 'a proposal not in the queue');
    // An admin reads everything.
    const admin = home.key('admin-alice');
    for (const path of ['/v1/grants', '/v1/enforcement', '/v1/refusals/metrics', '/metrics', '/dashboard', `/v1/proposals/${decided.proposal}`]) {
      assert.equal((await get(path, admin)).status, 200, `admin ${path}`);
    }
  });

  test('an auditor (authority rules 3, registered by two admins) reads everything an admin reads and can write nothing', async () => {
    const alice = home.key('admin-alice');
    const bob = home.key('admin-bob');
    const audrey = newSigner('auditor:audrey');
    const adminClient = new LedgerClient({ baseUrl: base, signer: alice, deciderKeys: [] });
    const registration = signStatement(createStatement('key.registered', { keyId: audrey.keyId, principal: audrey.principal, roles: ['auditor'] }, alice), [alice, bob, audrey], nodeEd25519);
    await adminClient.submit(registration);
    await eventually(async () => (running.follower.current().state.key(audrey.keyId) !== undefined ? true : undefined), 30_000, 'the auditor registered');
    for (const path of ['/v1/grants', '/v1/enforcement', '/v1/refusals/metrics', '/v1/pending', `/v1/decisions/${decided.proposal}/trail`, '/metrics', '/dashboard', `/v1/proposals/${decided.proposal}`, `/v1/receipts/${decided.partition}/${decided.index}`]) {
      assert.equal((await get(path, audrey)).status, 200, `auditor ${path}`);
    }
    // Writes: a grant proposed by the auditor is refused with KEY_ROLE (and recorded, like every refusal).
    const auditorClient = new LedgerClient({ baseUrl: base, signer: audrey, deciderKeys: [] });
    const grant = auditorClient.sign('grant.proposed', {
      grantId: 'g-by-auditor',
      agentId: 'agent:billing-bot',
      actionType: 'payment.send',
      targetResource: 'payments/vendors/acme',
      recipient: 'acme-corp',
      scope: 'invoice:2026-11',
      notBefore: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      effect: 'allow',
      tier: 1,
      parentGrantId: null,
    });
    await assert.rejects(auditorClient.submit(grant), (err: { code?: string }) => err.code === 'KEY_ROLE');
  });

  test('ledger dashboard serves the operator pages on loopback, each read signed with the local admin key, and nothing else', async () => {
    const cli = join(repoRoot, 'services/ledger/dist/src/main.js');
    const open = async (as: string): Promise<{ url: string; stop: () => Promise<void> }> => {
      const child = spawn(process.execPath, [cli, 'dashboard', '--home', home.dir, '--api', base, '--as', as, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const line = await eventually(async () => (out.includes('\n') ? out.slice(0, out.indexOf('\n')) : undefined), 30_000, 'ledger dashboard prints its URL');
      const report = JSON.parse(line) as { ok: boolean; url: string; signer: string };
      assert.equal(report.signer, as);
      return {
        url: report.url,
        stop: async () => {
          child.kill('SIGTERM');
          await once(child, 'exit');
        },
      };
    };
    const admin = await open('admin:alice');
    try {
      const page = await fetch(admin.url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<svg/);
      const origin = new URL(admin.url).origin;
      assert.equal((await fetch(`${origin}/metrics`)).status, 200);
      // Only the operator pages pass: the API's JSON reads and every write are not proxied.
      for (const path of ['/v1/grants', `/v1/proposals/${decided.proposal}`, '/v1/pending']) assert.equal((await fetch(`${origin}${path}`)).status, 404, path);
      assert.equal((await fetch(`${origin}/v1/statements`, { method: 'POST', body: '{}' })).status, 404);
    } finally {
      await admin.stop();
    }
    // Through an approver's key the dashboard is the API's 403: the proxy adds no rights.
    const approver = await open('approver:dana');
    try {
      assert.equal((await fetch(approver.url)).status, 403);
    } finally {
      await approver.stop();
    }
  });

  test('/metrics takes the configured scraper token; the token opens nothing else', async () => {
    const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /^ledger_api_operational_errors_total\{code="UNAUTHENTICATED"\} [1-9]\d*$/m);
    assertCode(await get('/metrics', null, { authorization: 'Bearer wrong-token' }), 401, 'UNAUTHENTICATED', 'wrong token');
    assertCode(await get('/v1/pending', null, { authorization: `Bearer ${METRICS_TOKEN}` }), 401, 'UNAUTHENTICATED', 'token on another route');
    // signedFetch signs whatever it sends: the same read twice is two fresh signatures.
    const read = signedFetch(home.key('admin-alice'));
    assert.equal((await read(`${base}/metrics`)).status, 200);
    assert.equal((await read(`${base}/metrics`)).status, 200);
  });
});

describe("readAuth 'open'", () => {
  test('an installation that chose open reads answers without a signature, and says so on /readyz', async () => {
    const fresh = freshDevHome();
    const config = JSON.parse(readFileSync(join(fresh.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(fresh.dir, 'config.json'), JSON.stringify({ ...config, api: { readAuth: 'open' } }));
    const home = LedgerHome.open(fresh.dir);
    const running = await startDev(home, ['api', 'sequencer', 'projector']);
    try {
      const ready = await eventually(async () => {
        const response = await fetch(`${running.apiUrl as string}/readyz`);
        return response.status === 200 ? ((await response.json()) as { readAuth?: string }) : undefined;
      }, 30_000, '/readyz');
      assert.equal(ready.readAuth, 'open');
      assert.equal((await fetch(`${running.apiUrl as string}/v1/pending`)).status, 200);
      assert.equal((await fetch(`${running.apiUrl as string}/metrics`)).status, 200);
    } finally {
      await running.stop();
    }
  });
});
