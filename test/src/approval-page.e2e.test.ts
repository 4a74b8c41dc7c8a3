import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { EntrySchema, statementHash, type Entry } from '@agent-ledger/core';
import { entryLocation, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { seriousViolations } from './axe.js';
import { signedFetch } from '@agent-ledger/client';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// The approval page as an approver on a phone sees it, in headless Chromium
// (Debian's) at 375 x 812 and at desktop size: the headline first, values
// never split across lines, live updates without a Refresh button.

process.env.LEDGER_DEADLINES_MS = '2:120000,3:120000,4:120000';

/** Screenshots land here (git-ignored) for a human to look at. */
const shots = join(repoRoot, 'test', 'screenshots');

describe('approval page', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let browser: Browser;

  before(async () => {
    mkdirSync(shots, { recursive: true });
    home = freshHome();
    running = await start(home);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
  });
  after(async () => {
    await browser?.close();
    await running?.stop();
  });

  test('phone: a $98,000 wire opens with its headline; amount, IBAN and recipient are whole tokens; a new request appears live', async () => {
    const billing = clientFor(home, running, 'agent-billing-bot');
    const wire = await billing.propose(proposal({ tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/globex', recipient: 'globex-ltd', scope: 'vendors', args: { amountUsd: 98000, iban: 'DE89370400440532013000', memo: 'Q4 consulting, invoice 2026-118' }, query: 'pay the Globex invoice' }));
    await eventually(async () => (await getJson<{ pending: { proposalHash: string }[] }>(running, '/v1/pending')).body.pending.find((p) => p.proposalHash === wire.statementHash), 30_000, 'the wire pending');

    const page = await browser.newPage({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${running.apiUrl}/approve`);
    // The page reads the queue with signed requests: nothing shows until this browser's key is registered.
    assert.equal(await page.locator('li[data-proposal]').count(), 0);
    await browserApprover(page, 'approver:gus');
    const row = page.locator(`li[data-proposal="${wire.statementHash}"]`);
    await row.waitFor({ timeout: 30_000 });
    const headline = row.locator('.headline');
    assert.equal(await headline.textContent(), 'billing-bot wants to pay $98,000.00 to globex-ltd IBAN DE89 3704 0044 0532 0130 00 on payments/vendors/globex');
    await page.screenshot({ path: join(shots, 'approve-phone-375.png'), fullPage: false });

    // The headline is on the first screen, without scrolling.
    const box = await headline.boundingBox();
    assert.ok(box !== null && box.y >= 0 && box.y + box.height <= 812, `headline within the first screen: ${JSON.stringify(box)}`);
    // No value is split across lines: each token is laid out as one box (one client rect), and within the page width.
    // Evaluated in the page (a DOM the test's own types do not describe).
    type Span = { dataset: Record<string, string>; textContent: string | null; getClientRects(): { length: number }; getBoundingClientRect(): { right: number } };
    const tokens = await row.locator('.token').evaluateAll((spans) => (spans as unknown as Span[]).map((s) => ({ field: s.dataset['token'], text: s.textContent, rects: s.getClientRects().length, right: s.getBoundingClientRect().right })));
    assert.deepEqual(tokens.map((t) => t.field), ['agent', 'amount', 'recipient', 'iban', 'target']);
    for (const t of tokens) {
      assert.equal(t.rects, 1, `${t.field} "${t.text}" is on one line`);
      assert.ok(t.right <= 375, `${t.field} within the screen`);
    }
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'no sideways scrolling of the page');
    // The exact operation is one tap away, its values unwrapped (scrolled sideways within their box).
    await row.locator('summary').click();
    const args = row.locator('dd[data-field="args"]');
    assert.deepEqual(JSON.parse((await args.textContent()) ?? ''), { amountUsd: 98000, iban: 'DE89370400440532013000', memo: 'Q4 consulting, invoice 2026-118' });
    assert.equal(await args.evaluate((dd) => (globalThis as unknown as { getComputedStyle(e: unknown): { whiteSpace: string } }).getComputedStyle(dd).whiteSpace), 'pre');
    await page.screenshot({ path: join(shots, 'approve-phone-375-details.png'), fullPage: true });
    // No serious or critical accessibility violation with a request shown and its details open.
    assert.deepEqual(await seriousViolations(page), []);

    // Live: a new request appears with no Refresh button to press.
    assert.equal(await page.locator('#refresh').count(), 0);
    const support = clientFor(home, running, 'agent-support-bot');
    const mail = await support.propose(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:9', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' }));
    await page.locator(`li[data-proposal="${mail.statementHash}"] .headline`).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator(`li[data-proposal="${mail.statementHash}"] .headline`).textContent(), 'support-bot wants to email customer@example.com on mail/outbound');
    await page.screenshot({ path: join(shots, 'approve-phone-375-live.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  /** A non-extractable key made in the page and registered by two admins with the page's proof of possession; its key id. */
  async function browserApprover(page: Page, principal: string): Promise<string> {
    const bin = join(repoRoot, 'services', 'ledger', 'dist', 'src', 'main.js');
    const cli = async (...args: string[]) => promisify(execFile)(process.execPath, [bin, ...args, '--home', home.dir, '--api', running.apiUrl as string], { encoding: 'utf8' });
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

  test('deny with a reason: the reason is signed into the human.response on the log', async () => {
    const billing = clientFor(home, running, 'agent-billing-bot');
    const wire = await billing.propose(proposal({ tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/initech', recipient: 'initech', scope: 'vendors', args: { amountUsd: 45000, iban: 'GB29NWBK60161331926819' }, query: 'pay Initech' }));
    const page = await browser.newPage({ viewport: { width: 375, height: 812 }, isMobile: true });
    await page.goto(`${running.apiUrl}/approve`);
    await browserApprover(page, 'approver:ivy');
    const row = page.locator(`li[data-proposal="${wire.statementHash}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.locator('input.reason').fill('unknown vendor, no purchase order');
    await page.screenshot({ path: join(shots, 'approve-phone-375-deny.png') });
    await row.locator('button.deny').click();
    const result = row.locator('.result[data-statement]');
    await result.waitFor();
    // Read at once: the live queue drops the row when the denial is decided.
    const responseHash = (await result.getAttribute('data-statement')) ?? '';
    const decision = await billing.awaitDecision(wire.statementHash, 30_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'HUMAN_DENIED']);
    const entry = await entryOnLog(responseHash);
    assert.equal(entry.envelope.statement.type, 'human.response');
    assert.deepEqual(entry.envelope.statement.body, { agentId: 'agent:billing-bot', proposal: wire.statementHash, request: (entry.envelope.statement.body as { request: string }).request, answer: 'deny', assurance: 'self_signed', platformIdentity: null, reason: 'unknown vendor, no purchase order' });
    await page.close();
  });

  test('browser key: a non-extractable WebCrypto key, registered by two admins with its proof of possession signed in the page, answers a request', async () => {
    const bin = join(repoRoot, 'services', 'ledger', 'dist', 'src', 'main.js');
    const ledger = async (...args: string[]) => promisify(execFile)(process.execPath, [bin, ...args, '--home', home.dir, '--api', running.apiUrl as string], { encoding: 'utf8' });
    const page = await browser.newPage({ viewport: { width: 375, height: 812 }, isMobile: true });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${running.apiUrl}/approve`);
    await page.locator('#browser-principal').fill('approver:finn');
    await page.locator('#browser-create').click();
    await page.locator('#browser-key-id', { hasText: /^[0-9a-f]{64}$/ }).waitFor();
    const keyId = (await page.locator('#browser-key-id').textContent()) ?? '';
    // The private key cannot be exported from the page.
    const exported = await page.evaluate(`new Promise((resolve) => { const open = indexedDB.open('agent-ledger', 1); open.onsuccess = () => { const get = open.result.transaction('keys').objectStore('keys').get('approver'); get.onsuccess = () => crypto.subtle.exportKey('pkcs8', get.result.privateKey).then(() => resolve('exported'), (e) => resolve(e.name)); }; })`);
    assert.equal(exported, 'InvalidAccessError');
    assert.match((await page.locator('#register-command').textContent()) ?? '', new RegExp(`--key-id ${keyId}`));

    const dir = mkdtempSync(join(tmpdir(), 'finn-'));
    await ledger('key', 'register', '--principal', 'approver:finn', '--roles', 'approver', '--key-id', keyId, '--as', 'admin:alice', '--out', join(dir, 'finn.json'));
    await page.setInputFiles('#proof-file', join(dir, 'finn.json'));
    await page.locator('#proof-link:not([hidden])').waitFor();
    writeFileSync(join(dir, 'finn-signed.json'), (await page.locator('#proof-link').getAttribute('data-signed')) ?? '');
    await ledger('key', 'cosign', join(dir, 'finn-signed.json'), '--as', 'admin:bob', '--submit', '--wait');
    await eventually(async () => (running.follower.current().state.key(keyId) !== undefined ? true : undefined), 30_000, 'finn registered');

    const support = clientFor(home, running, 'agent-support-bot');
    const mail = await support.propose(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'vip@example.com', scope: 'ticket:77', args: { to: 'vip@example.com', subject: 'Hello' }, query: 'greet' }));
    const row = page.locator(`li[data-proposal="${mail.statementHash}"]`);
    await row.waitFor({ timeout: 30_000 });
    await row.locator('button.approve').click();
    const result = row.locator('.result[data-statement]');
    await result.waitFor();
    const responseHash = (await result.getAttribute('data-statement')) ?? '';
    const decision = await support.awaitDecision(mail.statementHash, 30_000);
    assert.equal(decision.outcome, 'allow');
    const entry = await entryOnLog(responseHash);
    assert.deepEqual(entry.envelope.statement.author, { principal: 'approver:finn', keyId });
    await page.screenshot({ path: join(shots, 'approve-phone-375-browser-key.png'), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('desktop: the same page at 1280 x 800', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${running.apiUrl}/approve`);
    await browserApprover(page, 'approver:hal');
    await page.locator('li[data-proposal] .headline').first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(shots, 'approve-desktop.png'), fullPage: true });
    assert.deepEqual(await seriousViolations(page), []);
    // The live stream is a signed read too: refused without a signature, served to an approver.
    assert.equal((await fetch(`${running.apiUrl}/v1/pending/stream`, { signal: AbortSignal.timeout(5000) })).status, 401);
    const stream = await signedFetch(home.key('approver-dana'))(`${running.apiUrl}/v1/pending/stream`, { signal: AbortSignal.timeout(5000) });
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!/event: pending\ndata: \{"count":\d+\}/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await page.close();
  });
});
