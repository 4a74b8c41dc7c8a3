import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { once } from 'node:events';
import { join } from 'node:path';
import { LedgerClient, installationOf, signRead, signedFetch } from '@agent-ledger/client';
import { createStatement, nodeEd25519, signStatement, type Signer } from '@agent-ledger/core';
import { LedgerHome, newSigner, type RunningLedger } from '@agent-ledger/ledger';
import { freshDevHome, startDev } from './dev-mode.js';
import { repoRoot } from './fixtures.js';
import { eventually, proposal } from './live.js';

// Reads of the API from an attacker's side: without a signature nothing but
// the public routes answers (401); a principal reads only within its role
// (403 for a route outside it); a single proposal, decision, receipt or
// statement that is not the reader's is answered exactly as one that does
// not exist (404, or a decision-less 202); a captured signed read cannot be
// replayed (not even after a restart), a stale one or one signed for another
// installation is refused, a revoked key reads nothing; approvers read the
// open queue and what they answered, answer only open requests, and never
// read exports.

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
  let audience: string;

  /** A read header for `path`, signed by `as` for this installation (or the one given). */
  const sign = (as: Signer, path: string, options: { nowMs?: number; method?: string; audience?: string } = {}): string =>
    signRead(as, options.method ?? 'GET', path, { audience: options.audience ?? audience, ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }) });

  /** One GET: unsigned (`as` null), signed by a key, or with the headers given. */
  async function get(path: string, as: Signer | null, headers: Record<string, string> = {}): Promise<Answer> {
    const signed: Record<string, string> = as === null ? {} : { authorization: sign(as, path) };
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
    audience = installationOf(home.genesis());
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
    for (const header of ['Ledger-Ed25519', 'Ledger-Ed25519 keyId=zz', `Ledger-Ed25519 keyId=${'a'.repeat(64)},aud=${audience},ts=1,nonce=${'b'.repeat(32)},sig=${'A'.repeat(86)}==`, 'Basic YWRtaW46YWRtaW4=', `Bearer ${METRICS_TOKEN}`]) {
      assertCode(await get('/v1/pending', null, { authorization: header }), 401, 'UNAUTHENTICATED', header.slice(0, 30));
    }
    // The public routes: health, the trust document a client bootstraps from, the API description, the pages' files.
    for (const path of ['/healthz', '/readyz', '/v1/trust', '/v1/installation', '/openapi.json', '/', '/approve', '/approve/app.js', '/dashboard.css']) {
      assert.equal((await get(path, null)).status, 200, path);
    }
    assert.equal((await get('/readyz', null)).body['readAuth'], 'signed');
    // The installation id every read names is the genesis statement hash.
    assert.equal((await get('/v1/installation', null)).body['installation'], audience);
  });

  test("agent A asking for agent B's proposal, decision, receipt or statement status gets exactly the answer for one that does not exist; B reads its own", async () => {
    const ops = home.key('agent-ops-bot');
    const own = home.key('agent-billing-bot');
    const unknownHash = 'e'.repeat(64);
    const unknownId = '01930000-0000-7000-8000-000000000000';
    const pairs: [string, string][] = [
      [`/v1/proposals/${decided.proposal}`, `/v1/proposals/${unknownHash}`],
      [`/v1/decisions/${decided.proposal}`, `/v1/decisions/${unknownHash}`],
      [`/v1/decisions/${decided.proposal}?waitMs=300`, `/v1/decisions/${unknownHash}?waitMs=300`],
      [`/v1/receipts/${decided.partition}/${decided.index}`, `/v1/receipts/${decided.partition}/${decided.index + 1_000_000}`],
      [`/v1/statements/${decided.statementId}`, `/v1/statements/${unknownId}`],
    ];
    // The asked-for hash is the only difference a body may show.
    const strip = (body: Answer['body']): unknown => JSON.parse(JSON.stringify(body).replaceAll(decided.proposal, 'X').replaceAll(unknownHash, 'X'));
    for (const [hidden, missing] of pairs) {
      const startedHidden = Date.now();
      const a = await get(hidden, ops);
      const hiddenMs = Date.now() - startedHidden;
      const startedMissing = Date.now();
      const b = await get(missing, ops);
      const missingMs = Date.now() - startedMissing;
      assert.equal(a.status, b.status, `${hidden}: same status as ${missing}`);
      assert.deepEqual(strip(a.body), strip(b.body), `${hidden}: same body as ${missing}`);
      assert.ok(a.status === 404 || (a.status === 202 && a.body['decision'] === null), `${hidden}: ${a.status}`);
      if (a.status === 404) assert.equal(a.body.error?.code, 'NOT_FOUND');
      // A decision long-poll takes the whole wait either way: the hidden one does not come back early.
      if (hidden.includes('waitMs=300')) assert.ok(hiddenMs >= 280 && missingMs >= 280, `${hidden}: waited ${hiddenMs} and ${missingMs} ms`);
      assert.equal((await get(hidden.split('?')[0] as string, own)).status, 200, `billing-bot ${hidden}`);
    }
    // Listings: an agent reads its own rows only, never another's or all of them (a route-level 403: the same for an agent that does not exist).
    assert.equal((await get('/v1/enforcement?agentId=agent%3Aops-bot', ops)).status, 200);
    assertCode(await get('/v1/enforcement?agentId=agent%3Abilling-bot', ops), 403, 'FORBIDDEN', 'enforcement of another agent');
    assertCode(await get('/v1/enforcement?agentId=agent%3Anobody', ops), 403, 'FORBIDDEN', 'enforcement of an agent that does not exist');
    assertCode(await get('/v1/enforcement', ops), 403, 'FORBIDDEN', 'all enforcement records');
    assertCode(await get('/v1/grants', ops), 403, 'FORBIDDEN', 'the grant table');
    assertCode(await get('/v1/pending', ops), 403, 'FORBIDDEN', 'the approval queue');
    assertCode(await get('/metrics', ops), 403, 'FORBIDDEN', '/metrics');
    // The SDK signs its reads with the key it holds: its own decision comes back verified.
    const verified = await billing.awaitDecision(decided.proposal, 10_000);
    assert.equal(verified.proposal, decided.proposal);
    // Another agent's SDK never learns of it: its wait runs out as for a proposal without a decision.
    const stranger = new LedgerClient({ baseUrl: base, signer: ops, deciderKeys: [home.key('gate').keyId] });
    await assert.rejects(stranger.awaitDecision(decided.proposal, 1_500), (err: unknown) => (err as { code?: string }).code === 'CLIENT_TIMEOUT');
  });

  test('a replayed, duplicated, malleated, stale, future, re-targeted, foreign or badly signed read is 401; a signed read with a body is 400', async () => {
    const admin = home.key('admin-alice');
    const path = '/v1/pending';
    const header = sign(admin, path);
    assert.equal((await get(path, null, { authorization: header })).status, 200, 'first use');
    assertCode(await get(path, null, { authorization: header }), 401, 'UNAUTHENTICATED', 'replayed');
    // The same signature bytes in another base64 text (the last character's 4 padding bits changed).
    const tail = header.at(-3) as string;
    const malleated = `${header.slice(0, -3)}${tail === 'A' ? 'B' : String.fromCharCode(tail.charCodeAt(0) + 1)}==`;
    assertCode(await get(path, null, { authorization: malleated }), 401, 'UNAUTHENTICATED', 'malleated base64');
    // One fresh read sent five times at once: one answer, four refusals.
    const burst = sign(admin, path);
    const answers = await Promise.all(Array.from({ length: 5 }, () => get(path, null, { authorization: burst })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401, 401]);
    assertCode(await get(path, null, { authorization: sign(admin, path, { nowMs: Date.now() - 120_000 }) }), 401, 'UNAUTHENTICATED', 'stale');
    assertCode(await get(path, null, { authorization: sign(admin, path, { nowMs: Date.now() + 120_000 }) }), 401, 'UNAUTHENTICATED', 'future');
    // Signed for one target, sent to another (another query, another method's signature).
    assertCode(await get('/v1/pending?limit=1', null, { authorization: sign(admin, path) }), 401, 'UNAUTHENTICATED', 'other query');
    assertCode(await get(path, null, { authorization: sign(admin, path, { method: 'POST' }) }), 401, 'UNAUTHENTICATED', 'other method');
    // Signed for another installation (another genesis, where the same key could be registered too).
    const elsewhere = installationOf(freshDevHome().genesis());
    assert.notEqual(elsewhere, audience);
    assertCode(await get(path, null, { authorization: sign(admin, path, { audience: elsewhere }) }), 401, 'UNAUTHENTICATED', 'another installation');
    // Fields reordered, truncated, a v1 header without an audience.
    const fresh = sign(admin, path);
    const fields = fresh.slice('Ledger-Ed25519 '.length).split(',');
    assertCode(await get(path, null, { authorization: `Ledger-Ed25519 ${[...fields].reverse().join(',')}` }), 401, 'UNAUTHENTICATED', 'reordered');
    assertCode(await get(path, null, { authorization: fresh.slice(0, -10) }), 401, 'UNAUTHENTICATED', 'truncated');
    assertCode(await get(path, null, { authorization: fresh.replace(/,aud=[0-9a-f]{64}/, '') }), 401, 'UNAUTHENTICATED', 'v1 shape');
    // Another key's signature under the admin's key id.
    const forged = sign({ ...home.key('agent-ops-bot'), keyId: admin.keyId }, path);
    assertCode(await get(path, null, { authorization: forged }), 401, 'UNAUTHENTICATED', 'bad signature');
    assertCode(await get(path, newSigner('admin:mallory')), 401, 'UNAUTHENTICATED', 'unknown key');
    // A signed read is bodiless: a GET that brings a body is refused, typed, before its signature is looked at.
    const withBody = await new Promise<Answer>((resolve, reject) => {
      const url = new URL(base);
      const req = request({ host: url.hostname, port: url.port, method: 'GET', path, headers: { authorization: sign(admin, path), 'content-type': 'application/json', 'content-length': '2' } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] }));
      });
      req.on('error', reject);
      req.end('{}');
    });
    assertCode(withBody, 400, 'BAD_ARGUMENT', 'a body on a signed read');
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

  test("an approver reads the open queue and what it answered, answers only open requests (one refusal for unknown, closed and mismatched), and never reads exports", async () => {
    const dana = home.key('approver-dana');
    const eli = home.key('approver-eli');
    const support = new LedgerClient({ baseUrl: base, signer: home.key('agent-support-bot'), deciderKeys: [home.key('gate').keyId] });
    assert.equal((await get('/v1/pending', dana)).status, 200);
    for (const path of ['/v1/grants', '/v1/enforcement', '/v1/refusals/metrics', `/v1/decisions/${decided.proposal}/trail`, '/v1/grants/any/trail', '/metrics', '/dashboard']) {
      assertCode(await get(path, dana), 403, 'FORBIDDEN', `approver ${path}`);
    }
    // The routine proposal was never put to a human: not the approver's to read, answered as an unknown one.
    const unknown = await get(`/v1/proposals/${'e'.repeat(64)}`, dana);
    assert.deepEqual(await get(`/v1/proposals/${decided.proposal}`, dana), unknown, 'a proposal never in the queue');
    assert.deepEqual([unknown.status, unknown.body.error?.code], [404, 'NOT_FOUND'], 'an unknown proposal');
    assert.equal((await get(`/v1/decisions/${decided.proposal}`, dana)).body['decision'], null);

    // A proposal put to humans: in the queue, every approver reads it while it is open.
    const mail = await support.propose(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:31', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' }));
    const open = await eventually(async () => {
      const queue = (await get('/v1/pending', eli)).body['pending'] as { proposalHash: string; requestHash: string; agentId: string }[];
      return queue.find((row) => row.proposalHash === mail.statementHash);
    }, 30_000, 'the confirmation request in the queue');
    for (const approver of [dana, eli]) assert.equal((await get(`/v1/proposals/${mail.statementHash}`, approver)).status, 200, `${approver.principal} reads an open request's proposal`);

    // Answers outside the open queue, all refused alike (409 STALE_APPROVAL, typed, recorded), whatever exists.
    const answer = async (as: Signer, body: { proposal: string; request: string; agentId: string; answer: 'approve' | 'deny' }): Promise<Answer> => {
      const client = new LedgerClient({ baseUrl: base, signer: as, deciderKeys: [] });
      const envelope = client.sign('human.response', { ...body, assurance: 'self_signed', platformIdentity: null });
      const response = await fetch(`${base}/v1/statements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
      return { status: response.status, body: (await response.json()) as Answer['body'] };
    };
    const refusal = (a: Answer): unknown => ({ status: a.status, code: a.body.error?.code, message: a.body.error?.message?.replace(/request [0-9a-f]{16}/, 'request X'), retryable: a.body.error?.retryable });
    const unknownRequest = await answer(eli, { proposal: mail.statementHash, request: 'd'.repeat(64), agentId: 'agent:support-bot', answer: 'approve' });
    assertCode(unknownRequest, 409, 'STALE_APPROVAL', 'an unknown request');
    const otherProposal = await answer(eli, { proposal: decided.proposal, request: open.requestHash, agentId: 'agent:support-bot', answer: 'approve' });
    const otherAgent = await answer(eli, { proposal: mail.statementHash, request: open.requestHash, agentId: 'agent:billing-bot', answer: 'approve' });
    assert.deepEqual(refusal(otherProposal), refusal(unknownRequest), 'the request named for another proposal');
    assert.deepEqual(refusal(otherAgent), refusal(unknownRequest), 'the request named for another agent');

    // Dana denies it: closed. Eli's answer now is the same refusal as for a request that never was.
    assert.equal((await answer(dana, { proposal: mail.statementHash, request: open.requestHash, agentId: 'agent:support-bot', answer: 'deny' })).status, 202);
    const decision = await support.awaitDecision(mail.statementHash, 30_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'HUMAN_DENIED']);
    assert.deepEqual(refusal(await answer(eli, { proposal: mail.statementHash, request: open.requestHash, agentId: 'agent:support-bot', answer: 'approve' })), refusal(unknownRequest), 'a closed request');
    // Dana answered it: she still reads the proposal and its decision. Eli did not: for him it is as if it never was.
    await eventually(async () => ((await get(`/v1/pending`, eli)).body['pending'] as { proposalHash: string }[]).every((row) => row.proposalHash !== mail.statementHash) || undefined, 30_000, 'the request out of the queue');
    assert.equal((await get(`/v1/proposals/${mail.statementHash}`, dana)).status, 200, 'the answering approver reads the proposal');
    assert.equal((await get(`/v1/decisions/${mail.statementHash}`, dana)).status, 200, 'the answering approver reads the decision');
    const strip = (a: Answer): unknown => JSON.parse(JSON.stringify(a).replaceAll(mail.statementHash, 'X').replaceAll('e'.repeat(64), 'X'));
    assert.deepEqual(strip(await get(`/v1/proposals/${mail.statementHash}`, eli)), strip(unknown), 'another approver: the closed proposal');
    assert.deepEqual(strip(await get(`/v1/decisions/${mail.statementHash}`, eli)), strip(await get(`/v1/decisions/${'e'.repeat(64)}`, eli)), 'another approver: its decision');
    // An admin reads everything.
    const admin = home.key('admin-alice');
    for (const path of ['/v1/grants', '/v1/enforcement', '/v1/refusals/metrics', '/metrics', '/dashboard', `/v1/proposals/${decided.proposal}`, `/v1/decisions/${mail.statementHash}`]) {
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
  test('a read captured before a restart is refused after it: accepted reads are remembered in the database, not in the process', async () => {
    const admin = home.key('admin-alice');
    const captured = sign(admin, '/v1/pending');
    assert.equal((await get('/v1/pending', null, { authorization: captured })).status, 200);
    await running.stop();
    running = await startDev(home, ['api', 'sequencer', 'gate', 'projector', 'timer']);
    base = running.apiUrl as string;
    // Well inside the 30 s window: only the remembered nonce stops it.
    assertCode(await get('/v1/pending', null, { authorization: captured }), 401, 'UNAUTHENTICATED', 'replayed after the restart');
    assert.equal((await get('/v1/pending', admin)).status, 200, 'a fresh read');
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
