import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { OpenAICompatibleScreener, ScreenFailure, Verdict } from '../src/index.js';
import { CASES } from './support.js';

const isSchemaInvalid = (err: unknown): boolean => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID;

test('a bad configuration is refused with SCHEMA_INVALID', () => {
  const good = { baseUrl: 'http://127.0.0.1:1/v1', model: 'local-model', timeoutMs: 1000 };
  for (const bad of [
    { ...good, baseUrl: 'not a url' },
    { ...good, baseUrl: 'file:///etc/passwd' },
    { ...good, baseUrl: 'http://user:pw@127.0.0.1/v1' },
    { ...good, baseUrl: 'http://127.0.0.1/v1?x=1' },
    { ...good, model: '' },
    { ...good, model: 'm'.repeat(257) },
    { ...good, apiKey: '' },
    { ...good, apiKey: 'k\r\nX-Injected: 1' },
    { ...good, timeoutMs: 0 },
    { ...good, timeoutMs: 1.5 },
    { ...good, maxResponseBytes: -1 },
  ]) {
    assert.throws(() => new OpenAICompatibleScreener(bad), isSchemaInvalid, JSON.stringify(bad));
  }
});

test('the endpoint is baseUrl + /chat/completions, with or without a trailing slash', () => {
  assert.equal(new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:8080/v1', model: 'm', timeoutMs: 1 }).endpoint, 'http://127.0.0.1:8080/v1/chat/completions');
  assert.equal(new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:8080/v1/', model: 'm', timeoutMs: 1 }).endpoint, 'http://127.0.0.1:8080/v1/chat/completions');
});

test('a fetch that throws (even synchronously) yields uncertain with failure network', async () => {
  const throwing = (() => {
    throw new TypeError('boom');
  }) as unknown as typeof fetch;
  const rejecting = (() => Promise.reject(new Error('socket hang up'))) as typeof fetch;
  for (const impl of [throwing, rejecting]) {
    const screener = new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000, fetch: impl });
    const result = await screener.screen(CASES.routineList());
    assert.equal(result.verdict, Verdict.uncertain);
    assert.equal(result.failure, ScreenFailure.network);
  }
});

test('invalid input is not sent at all', async () => {
  let calls = 0;
  const counting = (() => {
    calls++;
    return Promise.reject(new Error('unreachable'));
  }) as typeof fetch;
  const screener = new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000, fetch: counting });
  const result = await screener.screen({ ...CASES.routineList(), tier: 7 });
  assert.equal(result.failure, ScreenFailure.invalid_input);
  assert.deepEqual(result.prompt, []);
  assert.equal(calls, 0);
});

test('a proposal over maxPromptChars is not sent and stays uncertain', async () => {
  let calls = 0;
  const counting = (() => {
    calls++;
    return Promise.reject(new Error('unreachable'));
  }) as typeof fetch;
  const screener = new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000, fetch: counting, maxPromptChars: 1024 });
  const input = CASES.routineList();
  const result = await screener.screen({ ...input, proposal: { ...input.proposal, query: 'q'.repeat(2000) } });
  assert.equal(result.verdict, Verdict.uncertain);
  assert.equal(result.failure, ScreenFailure.oversize);
  assert.equal(calls, 0);
});

test('a proposal that is not canonical JSON is uncertain with failure invalid_input', async () => {
  const screener = new OpenAICompatibleScreener({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 1000 });
  const input = CASES.routineList();
  const result = await screener.screen({ ...input, proposal: { ...input.proposal, args: { n: Number.NaN } } });
  assert.equal(result.verdict, Verdict.uncertain);
  assert.equal(result.failure, ScreenFailure.invalid_input);
});
