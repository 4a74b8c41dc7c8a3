import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import type { z } from 'zod';
import {
  CheckpointSchema,
  ConsistencySchema,
  DecisionAnswerSchema,
  EnforcementListSchema,
  GrantListSchema,
  HealthSchema,
  PendingListSchema,
  ProposalDetailSchema,
  ReadySchema,
  ReceiptSchema,
  RefusalMetricsSchema,
  StatementStatusSchema,
  type LedgerHome,
  type RunningLedger,
} from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';
import { signedFetch } from '@agent-ledger/client';

// The API's answers match the schemas /openapi.json publishes, and /metrics
// passes Prometheus's own linter (promtool check metrics) and its naming rules,
// on a live installation (real broker and Postgres) that approved and denied.

process.env.LEDGER_DEADLINES_MS = '2:20000,3:20000,4:20000';

const email = (n: number) => proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: `customer${n}@example.com`, scope: `ticket:${n}`, args: { to: `customer${n}@example.com`, subject: 'Your refund' }, query: 'tell the customer' });

function check<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 3))}`);
  return parsed.data as z.infer<T>;
}

describe('standards, live', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  const decided: string[] = [];

  before(async () => {
    home = freshHome();
    running = await start(home);
    const support = clientFor(home, running, 'agent-support-bot');
    const dana = clientFor(home, running, 'approver-dana');
    for (const [n, answer] of [[1, 'approve'], [2, 'deny']] as const) {
      const { statementHash } = await support.propose(email(n));
      const pending = await eventually(async () => {
        const { body } = await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending');
        return body.pending.find((p) => p.proposalHash === statementHash);
      }, 30_000, 'a pending confirmation');
      await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: statementHash, request: pending.requestHash, answer, assurance: 'self_signed', platformIdentity: null }));
      await support.awaitDecision(statementHash, 30_000);
      decided.push(statementHash);
    }
    // One left waiting: the queue depth is 1.
    await support.propose(email(3));
  });
  after(async () => {
    await running?.stop();
  });

  test('every documented answer parses with the schema /openapi.json publishes for it', async () => {
    const pending = await eventually(async () => {
      const { body } = await getJson<unknown>(running, '/v1/pending');
      const list = check(PendingListSchema, body, 'GET /v1/pending');
      return list.pending.length > 0 ? list : undefined;
    }, 30_000, 'the third proposal pending');
    const first = pending.pending[0] as { proposalHash: string };
    check(ProposalDetailSchema, (await getJson(running, `/v1/proposals/${first.proposalHash}`)).body, 'GET /v1/proposals/{hash}');
    const answered = await getJson(running, `/v1/decisions/${decided[0] as string}`);
    assert.equal(answered.status, 200);
    check(DecisionAnswerSchema, answered.body, 'GET /v1/decisions/{proposal} 200');
    const none = await getJson(running, `/v1/decisions/${'0'.repeat(64)}`);
    assert.equal(none.status, 202);
    check(DecisionAnswerSchema, none.body, 'GET /v1/decisions/{proposal} 202');
    check(EnforcementListSchema, (await getJson(running, '/v1/enforcement?limit=10')).body, 'GET /v1/enforcement');
    check(RefusalMetricsSchema, (await getJson(running, '/v1/refusals/metrics')).body, 'GET /v1/refusals/metrics');
    check(GrantListSchema, (await getJson(running, '/v1/grants')).body, 'GET /v1/grants');
    check(HealthSchema, (await getJson(running, '/healthz')).body, 'GET /healthz');
    check(ReadySchema, (await getJson(running, '/readyz')).body, 'GET /readyz');
    const checkpoint = await eventually(async () => {
      const r = await getJson(running, '/v1/checkpoints/latest?partition=0');
      return r.status === 200 ? check(CheckpointSchema, r.body, 'GET /v1/checkpoints/latest') : undefined;
    }, 30_000, 'a checkpoint');
    check(ReceiptSchema, (await getJson(running, '/v1/receipts/0/0')).body, 'GET /v1/receipts/{partition}/{index}');
    check(ConsistencySchema, (await getJson(running, `/v1/consistency?partition=0&from=1&to=${checkpoint.size}`)).body, 'GET /v1/consistency');
    const support = clientFor(home, running, 'agent-support-bot');
    const submitted = await support.submit(support.sign('proposal.submitted', { agentId: 'agent:support-bot', ...email(4) }));
    check(StatementStatusSchema, (await getJson(running, `/v1/statements/${submitted.id}`)).body, 'GET /v1/statements/{id}');
  });

  test('/metrics: promtool check metrics passes; counters end in _total and nothing else does; the operator metrics carry data', async () => {
    const text = await eventually(async () => {
      const body = await (await signedFetch(home.key('admin-alice'))(`${running.apiUrl}/metrics`)).text();
      // The third request and the latency samples of both answers are visible.
      return /^ledger_pending_approvals 1$/m.test(body) && /^ledger_approval_latency_seconds_count\{answer="deny"\} 1$/m.test(body) ? body : undefined;
    }, 30_000, 'pending depth 1 and two latency samples');
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(promtool.error, undefined, 'promtool is installed (bash scripts/promtool.sh)');
    assert.equal(promtool.status, 0, `promtool check metrics: ${promtool.stdout}${promtool.stderr}`);

    const families: PrometheusFamily[] = parsePrometheusTextFormat(text);
    assert.ok(families.length > 20);
    for (const family of families) {
      assert.match(family.name, /^[a-zA-Z_:][a-zA-Z0-9_:]*$/, family.name);
      assert.ok(family.help.length > 0, `${family.name} has help`);
      if (family.type === 'COUNTER') assert.match(family.name, /_total$/, `counter ${family.name} ends in _total`);
      else assert.doesNotMatch(family.name, /_total$/, `${family.type.toLowerCase()} ${family.name} must not end in _total`);
      if (family.name.startsWith('ledger_') && /(seconds|age|latency|duration|wait)/.test(family.name)) assert.match(family.name, /_seconds(_total)?$/, `${family.name}: time in base unit seconds`);
    }
    const byName = new Map(families.map((f) => [f.name, f]));
    assert.equal(byName.get('ledger_approval_latency_seconds')?.type, 'HISTOGRAM');
    // The parser folds labelled histograms into one sample: the per-answer series are read from the text.
    const series = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(series('ledger_approval_latency_seconds_count\\{answer="approve"\\}'), 1);
    assert.equal(series('ledger_approval_latency_seconds_count\\{answer="deny"\\}'), 1);
    assert.ok(series('ledger_approval_latency_seconds_sum\\{answer="approve"\\}') > 0, 'the approval took time');
    assert.equal(series('ledger_approval_latency_seconds_bucket\\{le="\\+Inf",answer="approve"\\}'), 1);
    assert.equal(byName.get('ledger_pending_approvals')?.type, 'GAUGE');
    assert.equal(byName.get('ledger_pending_approvals')?.metrics[0]?.value, '1');
    assert.ok(Number(byName.get('ledger_pending_approval_oldest_age_seconds')?.metrics[0]?.value) >= 0);
    const age = byName.get('ledger_checkpoint_age_seconds');
    assert.equal(age?.type, 'GAUGE');
    assert.ok((age?.metrics ?? []).some((m) => m.labels?.['partition'] === '0' && Number(m.value) >= 0), 'partition 0 has a checkpoint age');
    for (const counter of ['ledger_sequencer_rejected_total', 'ledger_grant_suggestions_total', 'ledger_gate_commit_failures_total', 'ledger_timer_tick_failures_total', 'ledger_rejected_signings_total']) {
      assert.equal(byName.get(counter)?.type, 'COUNTER', counter);
    }
  });
});
