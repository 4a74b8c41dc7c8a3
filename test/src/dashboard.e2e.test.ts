import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { seriousViolations } from './axe.js';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';
import { installationOf, signRead, signedFetch } from '@agent-ledger/client';

// The operator's pages in headless Chromium on a live installation: the
// landing page at / and the dashboard's pictures, whose drawn values are read
// back and compared with what the API and the projection say.

process.env.LEDGER_DEADLINES_MS = '2:120000,3:120000,4:120000';

const shots = join(repoRoot, 'test', 'screenshots');
const email = (n: number) => proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: `customer${n}@example.com`, scope: `ticket:${n}`, args: { to: `customer${n}@example.com`, subject: 'Your refund' }, query: 'tell the customer' });

describe('operator dashboard', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let browser: Browser;

  before(async () => {
    mkdirSync(shots, { recursive: true });
    home = freshHome();
    running = await start(home);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
    const support = clientFor(home, running, 'agent-support-bot');
    const dana = clientFor(home, running, 'approver-dana');
    // One approved, one denied (a HUMAN_DENIED refusal), one left waiting.
    for (const [n, answer] of [[1, 'approve'], [2, 'deny']] as const) {
      const { statementHash } = await support.propose(email(n));
      const pending = await eventually(async () => (await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending')).body.pending.find((p) => p.proposalHash === statementHash), 30_000, 'pending');
      await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: statementHash, request: pending.requestHash, answer, assurance: 'self_signed', platformIdentity: null }));
      await support.awaitDecision(statementHash, 30_000);
    }
    const waiting = await support.propose(email(3));
    await eventually(async () => (await getJson<{ pending: { proposalHash: string }[] }>(running, '/v1/pending')).body.pending.find((p) => p.proposalHash === waiting.statementHash), 30_000, 'the third pending');
    await eventually(async () => ((await getJson<{ metrics: { code: string }[] }>(running, '/v1/refusals/metrics')).body.metrics.some((m) => m.code === 'HUMAN_DENIED') ? true : undefined), 30_000, 'the refusal projected');
  });
  after(async () => {
    await browser?.close();
    await running?.stop();
  });

  test('/ is a landing page for operators, not a JSON 404', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const response = await page.goto(`${running.apiUrl}/`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()['content-type'] ?? '', /^text\/html/);
    assert.deepEqual(await page.locator('a').evaluateAll((as) => as.map((a) => (a as unknown as { getAttribute(n: string): string }).getAttribute('href'))), ['/dashboard', '/approve', '/openapi.json', '/metrics', '/readyz', '/healthz']);
    await page.screenshot({ path: join(shots, 'landing.png') });
    assert.deepEqual(await seriousViolations(page), []);
    await page.close();
  });

  test('the dashboard draws the queue, decisions and refusals per minute, approval latency and checkpoints from live data', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    // The dashboard is an admin's read: unsigned it is 401; each request the page makes to it is signed here,
    // as a signing proxy in front of an operator's browser would.
    assert.equal((await fetch(`${running.apiUrl}/dashboard`)).status, 401);
    await page.route(`${running.apiUrl}/dashboard`, (route) => route.continue({ headers: { ...route.request().headers(), authorization: signRead(home.key('admin-alice'), 'GET', '/dashboard', { audience: installationOf(home.genesis()) }) } }));
    // The SIEM exporter has exported the refusal: /metrics says it has nothing left on any partition.
    const metricsFetch = signedFetch(home.key('admin-alice'));
    await eventually(async () => {
      const backlog = [...(await (await metricsFetch(`${running.apiUrl}/metrics`)).text()).matchAll(/^ledger_siem_export_backlog_entries\{partition="(\d+)"\} (\d+)$/gm)];
      return backlog.length === home.config.eventPartitions + 1 && backlog.every((m) => m[2] === '0') ? true : undefined;
    }, 30_000, 'the SIEM exporter caught up');
    await page.goto(`${running.apiUrl}/dashboard`);
    await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true });
    // No serious or critical accessibility violation (WCAG A/AA and axe best practices) at desktop size or on a phone.
    assert.deepEqual(await seriousViolations(page), []);
    await page.setViewportSize({ width: 375, height: 812 });
    await page.screenshot({ path: join(shots, 'dashboard-phone-375.png'), fullPage: true });
    assert.deepEqual(await seriousViolations(page), []);

    const { body: pending } = await getJson<{ pending: { proposalHash: string }[] }>(running, '/v1/pending');
    assert.equal(await page.locator('[data-tile="pending"] b').textContent(), String(pending.pending.length));
    const queued = await page.locator('[data-chart="pending"] g[data-proposal]').evaluateAll((gs) => gs.map((g) => (g as unknown as { dataset: Record<string, string> }).dataset['proposal']));
    assert.deepEqual(queued.sort(), pending.pending.map((p) => p.proposalHash).sort());

    // Refusals by code: the drawn segments add up to the projection's counts.
    const { body: refusals } = await getJson<{ metrics: { code: string; count: number }[] }>(running, '/v1/refusals/metrics');
    const drawnRefusals = await page.locator('[data-chart="refusals"] rect[data-key]').evaluateAll((rs) => rs.map((r) => (r as unknown as { dataset: Record<string, string> }).dataset));
    const sum = (rows: { key?: string; code?: string; count: number | string }[], key: string) => rows.filter((r) => (r.key ?? r.code) === key).reduce((n, r) => n + Number(r.count), 0);
    assert.ok(sum(drawnRefusals as never, 'HUMAN_DENIED') >= 1);
    assert.equal(sum(drawnRefusals as never, 'HUMAN_DENIED'), sum(refusals.metrics, 'HUMAN_DENIED'));
    // Decisions by outcome: one allow, one deny at least.
    const decided = await page.locator('[data-chart="decisions"] rect[data-key]').evaluateAll((rs) => rs.map((r) => (r as unknown as { dataset: Record<string, string> }).dataset));
    assert.ok(sum(decided as never, 'allow') >= 1, 'an allow drawn');
    assert.ok(sum(decided as never, 'deny') >= 1, 'a deny drawn');
    // Approval latency: the two answers are in the histogram's bars.
    const latency = await page.locator('[data-chart="latency"] g[data-le]').evaluateAll((gs) => gs.map((g) => Number((g as unknown as { dataset: Record<string, string> }).dataset['count'])));
    assert.equal(latency.reduce((a, b) => a + b, 0), 2);
    // Fatigue signals: both drawn, with the counts the log gives (none rushed here: the answers took their time or not, either way the numbers match /metrics).
    const signals = await page.locator('[data-chart="fatigue"] g[data-signal]').evaluateAll((gs) => gs.map((g) => (g as unknown as { dataset: Record<string, string> }).dataset));
    assert.deepEqual(signals.map((g) => g['signal']), ['approval.rushed', 'grant.suggested']);
    const metricsText = await (await metricsFetch(`${running.apiUrl}/metrics`)).text();
    for (const g of signals) {
      const exported = new RegExp(`^ledger_fatigue_signals_total\\{signal="${(g['signal'] as string).replace('.', '\\.')}"\\} (\\d+)$`, 'm').exec(metricsText)?.[1] ?? '0';
      assert.equal(g['count'], exported, `${g['signal']} drawn as exported`);
    }
    // Checkpoints: a row per partition of this installation, partition 0 checkpointed.
    const partitions = await page.locator('[data-chart="checkpoints"] g[data-partition]').evaluateAll((gs) => gs.map((g) => (g as unknown as { dataset: Record<string, string> }).dataset));
    assert.deepEqual(partitions.map((p) => p['partition']).sort(), Array.from({ length: home.config.eventPartitions + 1 }, (_, p) => String(p)));
    assert.ok(Number(partitions.find((p) => p['partition'] === '0')?.['size']) > 0, 'partition 0 has a checkpoint');
    // SIEM export backlog: a bar per ledger partition, drawn from the exporter's committed offsets against the log's end.
    const siem = await page.locator('[data-chart="siem"] g[data-partition]').evaluateAll((gs) => gs.map((g) => (g as unknown as { dataset: Record<string, string> }).dataset));
    assert.deepEqual(siem.map((p) => p['partition']), Array.from({ length: home.config.eventPartitions + 1 }, (_, p) => String(p)));
    for (const p of siem) assert.equal(p['behind'], '0', `partition ${p['partition']} exported`);
    // Partition 0 (authority) holds entries, so the exporter has a committed position on it, at the end but for the commit marker.
    const authority = siem.find((p) => p['partition'] === '0');
    assert.ok(Number(authority?.['end']) > 0 && authority?.['committed'] !== '', 'the authority partition has a committed SIEM position');
    assert.equal(await page.locator('[data-tile="siem"] b').textContent(), 'caught up');
    // The page reloads itself only when the operator asks for it (one link away), never unasked.
    assert.equal(await page.locator('meta[http-equiv="refresh"]').count(), 0);
    assert.equal(await page.locator('a[href="/dashboard?live=1"]').count(), 1);
    // Everything is served here: no script, nothing from elsewhere.
    assert.deepEqual(requests.filter((u) => !u.startsWith(running.apiUrl as string)), []);
    assert.equal(await page.locator('script').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
