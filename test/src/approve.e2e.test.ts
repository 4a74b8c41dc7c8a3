import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { EntrySchema, canonicalJson, nodeEd25519, statementHash, verifyEnvelopeSignatures, type Entry } from '@agent-ledger/core';
import { entryLocation, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { assertJsonFailure, assertJsonSuccess } from './cli-json-shape.js';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// The approver's side, end to end on the real broker and Postgres: the
// `ledger approve` CLI (a child process, as an approver runs it) and the web
// approval page in headless Chromium (Debian's, driven by playwright-core).

process.env.LEDGER_DEADLINES_MS = '2:60000,3:60000,4:60000';

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

interface PendingRow {
  proposalHash: string;
  requestHash: string;
  status: string;
  tier: number;
}

describe('approving pending confirmations', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let browser: Browser | undefined;

  before(async () => {
    home = freshHome();
    running = await start(home);
  });
  after(async () => {
    await browser?.close();
    await running?.stop();
  });

  /** Runs `ledger approve ...` as a child process (async: the ledger runs in this process). */
  function approve(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, 'approve', '--home', home.dir, '--api', running.apiUrl as string, ...args], { cwd: repoRoot, encoding: 'utf8' }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
        resolve({ status: code, stdout, stderr });
      });
    });
  }

  /**
   * Gives the page an approver key of its own: a non-extractable WebCrypto key
   * made in the page, registered by admin:alice and admin:bob with the page's
   * proof of possession (the key never exists outside the browser).
   */
  async function browserApprover(page: Page, principal: string): Promise<string> {
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [bin, ...args, '--home', home.dir, '--api', running.apiUrl as string], { cwd: repoRoot, encoding: 'utf8' });
    await page.locator('#browser-principal').fill(principal);
    await page.locator('#browser-create').click();
    await page.locator('#browser-key-id', { hasText: /^[0-9a-f]{64}$/ }).waitFor();
    const keyId = (await page.locator('#browser-key-id').textContent()) ?? '';
    const dir = mkdtempSync(join(tmpdir(), 'browser-key-'));
    await cli('key', 'register', '--principal', principal, '--roles', 'approver', '--key-id', keyId, '--as', 'admin:alice', '--out', join(dir, 'key.json'));
    await page.setInputFiles('#proof-file', join(dir, 'key.json'));
    await page.locator('#proof-link:not([hidden])').waitFor();
    writeFileSync(join(dir, 'signed.json'), (await page.locator('#proof-link').getAttribute('data-signed')) ?? '');
    await cli('key', 'cosign', join(dir, 'signed.json'), '--as', 'admin:bob', '--submit', '--wait');
    await eventually(async () => (running.follower.current().state.key(keyId) !== undefined ? true : undefined), 30_000, `${principal} registered`);
    return keyId;
  }

  const emailCustomer = (): ReturnType<typeof proposal> =>
    proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' });
  const forcePush = (): ReturnType<typeof proposal> =>
    proposal({ tool: 'shell', actionType: 'shell.exec', targetResource: 'repo/payments-service', recipient: 'none', scope: 'main', args: { command: 'git push --force origin main' }, query: 'publish the hotfix', context: { environment: 'production' } });

  /** Proposes as `agentKey` and waits until the proposal is in the pending queue. */
  async function pending(agentKey: string, body: ReturnType<typeof proposal>): Promise<PendingRow> {
    const agent = clientFor(home, running, agentKey);
    const { statementHash: hash } = await agent.propose(body);
    return eventually(async () => {
      const { body: list } = await getJson<{ pending: PendingRow[] }>(running, '/v1/pending');
      return list.pending.find((p) => p.proposalHash === hash && p.status === 'pending');
    }, 30_000, 'a pending confirmation');
  }

  /** The log's entry of a statement, read from Kafka (the committed events topic). */
  async function entryOnLog(hash: string): Promise<Entry> {
    const topics = topicNames(home.config.topicPrefix);
    return eventually(async () => {
      for (let p = 1; p <= home.config.eventPartitions; p++) {
        const { topic, partition } = entryLocation(topics, p);
        for await (const record of running.bus.readRange(topic, partition, '0')) {
          const entry = EntrySchema.parse(JSON.parse(record.value.toString('utf8'))) as unknown as Entry;
          if (statementHash(entry.envelope.statement) === hash) return entry;
        }
      }
      return undefined;
    }, 30_000, `statement ${hash.slice(0, 12)} on the log`);
  }

  test('CLI: list shows the exact operation; approve by hash prefix gives allow; deny gives HUMAN_DENIED', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const item = await pending('agent-support-bot', emailCustomer());
    assert.equal(item.tier, 2);

    const listed = await approve('--list', '--json');
    const shown = (assertJsonSuccess(listed, 'approve --list --json') as { pending: Record<string, unknown>[] }).pending.find((p) => p['proposalHash'] === item.proposalHash);
    assert.ok(shown, 'the pending item is listed');
    assert.deepEqual(
      [shown['agent'], shown['tool'], shown['actionType'], shown['targetResource'], shown['recipient'], shown['scope'], shown['query'], shown['tier']],
      ['agent:support-bot', 'email', 'email.send', 'mail/outbound', 'customer@example.com', 'ticket:4711', 'tell the customer', 2],
    );
    assert.deepEqual(shown['args'], { to: 'customer@example.com', subject: 'Your refund' });
    assert.equal(typeof shown['risk'], 'number');
    assert.ok((shown['secondsLeft'] as number) > 0 && (shown['secondsLeft'] as number) <= 60);

    const plain = await approve('--list');
    assert.equal(plain.status, 0, plain.stderr);
    assert.match(plain.stdout, new RegExp(`${item.proposalHash.slice(0, 12)}  tier 2 .* expires in \\d+s`));
    assert.match(plain.stdout, /recipient customer@example\.com/);

    const approved = await approve('--approve', item.proposalHash.slice(0, 10), '--as', 'approver:dana');
    assert.equal(approved.status, 0, approved.stderr);
    const responseHash = /statement ([0-9a-f]{64})/.exec(approved.stdout)?.[1];
    assert.ok(responseHash, approved.stdout);
    assert.equal((await support.awaitDecision(item.proposalHash, 30_000)).outcome, 'allow');
    const response = await entryOnLog(responseHash);
    assert.equal(response.envelope.statement.author.principal, 'approver:dana');
    assert.equal((response.envelope.statement.body as { proposal: string }).proposal, item.proposalHash);

    const denied = await pending('agent-support-bot', emailCustomer());
    const deny = await approve('--deny', denied.proposalHash.slice(0, 10));
    assert.equal(deny.status, 0, deny.stderr);
    const decision = await support.awaitDecision(denied.proposalHash, 30_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'HUMAN_DENIED']);
  });

  test('CLI: on a terminal the list is a live countdown, redrawn in place', async () => {
    const item = await pending('agent-support-bot', emailCustomer());
    // `script` gives the CLI a pseudo-terminal; SIGINT (Ctrl-C) ends the live view.
    const command = `timeout -s INT 6 ${process.execPath} ${bin} approve --home ${home.dir} --api ${running.apiUrl as string}`;
    const output = await new Promise<string>((resolve) => {
      execFile('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' }, (_err, stdout) => resolve(stdout));
    });
    // Each frame is written as one synchronized update (log-update), after erasing the rows the previous one took.
    const frames = output.split('\x1b[?2026h').filter((f) => f.includes('expires in'));
    assert.ok(frames.length >= 2, `at least one redraw in ${JSON.stringify(output)}`);
    const seconds = frames.map((f) => Number(new RegExp(`${item.proposalHash.slice(0, 12)}  tier 2 .*expires in (\\d+)s`).exec(f)?.[1]));
    assert.ok(seconds.every((s) => Number.isInteger(s) && s > 0), JSON.stringify(seconds));
    for (let i = 1; i < seconds.length; i++) assert.ok((seconds[i] as number) <= (seconds[i - 1] as number), 'the countdown never goes up');
  });

  test('CLI: bad ids and batch approval of tier 3 or more are refused with a typed error, exit 1 (a refusal), with --json or without', async () => {
    for (const maxTier of ['3', '4']) {
      const refused = await approve('--batch', '--max-tier', maxTier);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /^ledger: POLICY_VIOLATION: /);
      assertJsonFailure(await approve('--batch', '--max-tier', maxTier, '--json'), `approve --batch --max-tier ${maxTier} --json`, 'POLICY_VIOLATION');
    }
    const unknown = await approve('--approve', 'ffffffffffff');
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /^ledger: SCHEMA_INVALID: /);
    assertJsonFailure(await approve('--approve', 'ffffffffffff', '--json'), 'approve --approve ffffffffffff --json', 'SCHEMA_INVALID');
    const notHex = await approve('--approve', 'xyz!');
    assert.equal(notHex.status, 1);
    assert.match(notHex.stderr, /^ledger: SCHEMA_INVALID: /);
  });

  test('CLI: --batch approves the low tiers only; a tier-3 item stays pending', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const deploy = clientFor(home, running, 'agent-deploy-bot');
    const low = await pending('agent-support-bot', emailCustomer());
    const high = await pending('agent-deploy-bot', forcePush());
    assert.equal(low.tier, 2);
    assert.equal(high.tier, 3);

    const batch = await approve('--batch', '--max-tier', '2', '--json');
    const answered = (assertJsonSuccess(batch, 'approve --batch --json') as { answered: { proposalHash: string; tier: number }[] }).answered;
    assert.ok(answered.some((a) => a.proposalHash === low.proposalHash));
    assert.ok(answered.every((a) => a.tier <= 2), JSON.stringify(answered));
    assert.ok(!answered.some((a) => a.proposalHash === high.proposalHash));
    assert.equal((await support.awaitDecision(low.proposalHash, 30_000)).outcome, 'allow');
    const { body } = await getJson<{ pending: PendingRow[] }>(running, '/v1/pending');
    assert.ok(body.pending.some((p) => p.proposalHash === high.proposalHash && p.status === 'pending'), 'the tier-3 item is still pending');

    // Tier 3 is answered one at a time.
    const one = await approve('--approve', high.proposalHash.slice(0, 12));
    assert.equal(one.status, 0, one.stderr);
    assert.equal((await deploy.awaitDecision(high.proposalHash, 30_000)).outcome, 'allow');
  });

  test('browser: the page shows the operation, signs with the loaded key, and the ledger allows', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const item = await pending('agent-support-bot', emailCustomer());
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    const external: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(running.apiUrl as string)) external.push(request.url());
    });

    const response = await page.goto(`${running.apiUrl}/approve`);
    assert.equal(response?.status(), 200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);

    // No key in this browser yet: its reads are unsigned, so the queue is not shown at all.
    await page.locator('#queue-status', { hasText: 'create a key in this browser' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('li[data-proposal]').count(), 0, 'no key, no queue');
    const gwenKey = await browserApprover(page, 'approver:gwen');
    await page.locator('#key-status', { hasText: 'approver:gwen' }).waitFor();
    const row = page.locator(`li[data-proposal="${item.proposalHash}"]`);
    await row.waitFor({ timeout: 30_000 });

    assert.equal(await row.locator('dd[data-field="recipient"]').textContent(), 'customer@example.com');
    assert.equal(await row.locator('dd[data-field="actionType"]').textContent(), 'email.send');
    assert.equal(await row.locator('dd[data-field="targetResource"]').textContent(), 'mail/outbound');
    assert.deepEqual(JSON.parse((await row.locator('dd[data-field="args"]').textContent()) ?? ''), { to: 'customer@example.com', subject: 'Your refund' });
    assert.match((await row.locator('.countdown').textContent()) ?? '', /^expires in \d+s$/);

    await row.locator('button.approve').click();
    const result = row.locator('.result[data-statement]');
    await result.waitFor();
    const responseHash = (await result.getAttribute('data-statement')) ?? '';
    assert.match(responseHash, /^[0-9a-f]{64}$/);

    const decision = await support.awaitDecision(item.proposalHash, 30_000);
    assert.equal(decision.outcome, 'allow');
    const entry = await entryOnLog(responseHash);
    const statement = entry.envelope.statement;
    assert.equal(statement.type, 'human.response');
    assert.deepEqual(statement.author, { principal: 'approver:gwen', keyId: gwenKey });
    assert.deepEqual(statement.body, { agentId: 'agent:support-bot', proposal: item.proposalHash, request: item.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: null });
    assert.deepEqual(verifyEnvelopeSignatures(entry.envelope, canonicalJson(statement), nodeEd25519), [gwenKey]);
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(external, [], 'the page loads nothing from elsewhere');
    await page.close();
  });

  test('browser: a tampered request (signature over other bytes) is refused by the ledger and decides nothing', async () => {
    const item = await pending('agent-support-bot', emailCustomer());
    browser ??= await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
    const page = await browser.newPage();
    // An attacker between page and ledger turns the signed "deny" into "approve".
    const refusals: { status: number; body: string }[] = [];
    await page.route('**/v1/statements', async (route) => {
      const original = route.request().postData() ?? '';
      assert.match(original, /"answer":"deny"/);
      const tampered = original.replace('"answer":"deny"', '"answer":"approve"');
      const answer = await route.fetch({ postData: tampered });
      refusals.push({ status: answer.status(), body: await answer.text() });
      await route.fulfill({ response: answer });
    });
    await page.goto(`${running.apiUrl}/approve`);
    await browserApprover(page, 'approver:hana');
    const row = page.locator(`li[data-proposal="${item.proposalHash}"]`);
    await row.waitFor();
    await row.locator('button.deny').click();
    await row.locator('.result.error').waitFor();
    assert.match((await row.locator('.result').textContent()) ?? '', /INVALID_SIGNATURE/);
    assert.equal(refusals.length, 1);
    assert.equal(refusals[0]?.status, 401);
    assert.equal((JSON.parse(refusals[0]?.body ?? '{}') as { error: { code: string } }).error.code, 'INVALID_SIGNATURE');
    const decision = await getJson<{ decision: unknown }>(running, `/v1/decisions/${item.proposalHash}`);
    assert.equal(decision.status, 202, 'still undecided: the forged approval counted for nothing');
    await page.close();
  });

  test('API: the approval page serves only its allow-list, and /v1/proposals refuses bad hashes', async () => {
    for (const path of ['/approve/app.js', '/approve/vendor/noble-ed25519.js', '/approve/vendor/noble-hashes/sha2.js', '/approve/app.css']) {
      const r = await fetch(`${running.apiUrl}${path}`);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    }
    for (const path of ['/approve/vendor/noble-hashes/sha3.js', '/approve/../package.json', '/approve/vendor/%2e%2e/noble-ed25519.js']) {
      assert.equal((await fetch(`${running.apiUrl}${path}`)).status, 404, path);
    }
    const bad = await getJson<{ error: { code: string } }>(running, '/v1/proposals/not-a-hash');
    assert.deepEqual([bad.status, bad.body.error.code], [400, 'BAD_ARGUMENT']);
    const missing = await getJson<{ error: { code: string } }>(running, `/v1/proposals/${'0'.repeat(64)}`);
    assert.equal(missing.status, 404);
  });
});
