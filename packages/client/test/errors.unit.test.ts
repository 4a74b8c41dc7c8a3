import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError, OperationalError, isReasonCode } from '@agent-ledger/refusals';
import { generateSeed, keyIdOf, nodeEd25519, type Signer } from '@agent-ledger/core';
import { LedgerClient, apiError } from '../src/index.js';

// How the SDK reads the API's answers, with a fake fetch (no I/O): refusals
// keep their ReasonCode, outages and server faults are operational codes,
// and the caller's own wait running out is CLIENT_TIMEOUT, never a refusal.

function signer(): Signer {
  const seed = generateSeed();
  return { principal: 'agent:test-bot', keyId: keyIdOf(seed, nodeEd25519), seed };
}

function answering(status: number, body: unknown): typeof fetch {
  return (async () => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })) as typeof fetch;
}

function clientWith(fetchImpl: typeof fetch): LedgerClient {
  return new LedgerClient({ baseUrl: 'http://ledger.invalid', signer: signer(), deciderKeys: [], fetch: fetchImpl });
}

const proposal = {
  tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace',
  args: {}, query: 'q', labels: [], channel: 'api' as const, context: {},
};

async function codeOf(promise: Promise<unknown>): Promise<{ kind: string; code: string; retryable: boolean }> {
  try {
    await promise;
  } catch (err) {
    const kind = err instanceof LedgerError ? 'refusal' : err instanceof OperationalError ? 'operational' : 'other';
    return { kind, code: (err as { code: string }).code, retryable: (err as { retryable: boolean }).retryable };
  }
  assert.fail('expected an error');
}

test('a refusal stays a LedgerError with its ReasonCode', async () => {
  const refused = clientWith(answering(403, { error: { code: 'KEY_ROLE', message: 'needs the admin role', retryable: false } }));
  assert.deepEqual(await codeOf(refused.propose(proposal)), { kind: 'refusal', code: 'KEY_ROLE', retryable: false });
  const replay = clientWith(answering(409, { error: { code: 'REPLAY', message: 'seen', retryable: false } }));
  assert.deepEqual(await codeOf(replay.propose(proposal)), { kind: 'refusal', code: 'REPLAY', retryable: false });
});

test('HTTP 5xx is INTERNAL or UNAVAILABLE, whatever code its body claims', async () => {
  const claims = clientWith(answering(500, { error: { code: 'INTEGRITY_FAILURE', message: 'internal error', retryable: true } }));
  assert.deepEqual(await codeOf(claims.propose(proposal)), { kind: 'operational', code: 'INTERNAL', retryable: true });
  const html = clientWith(answering(502, '<html>bad gateway</html>'));
  assert.deepEqual(await codeOf(html.propose(proposal)), { kind: 'operational', code: 'UNAVAILABLE', retryable: true });
  const unavailable = clientWith(answering(503, { error: { code: 'UNAVAILABLE', message: 'broker down', retryable: true } }));
  assert.deepEqual(await codeOf(unavailable.awaitDecision('a'.repeat(64), 1000)), { kind: 'operational', code: 'UNAVAILABLE', retryable: true });
});

test('an unreachable API is UNAVAILABLE; an aborted wait is CLIENT_TIMEOUT', async () => {
  const refusedConnection = clientWith((async () => {
    throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  }) as typeof fetch);
  assert.deepEqual(await codeOf(refusedConnection.propose(proposal)), { kind: 'operational', code: 'UNAVAILABLE', retryable: true });
  const aborted = clientWith((async () => {
    throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  }) as typeof fetch);
  assert.deepEqual(await codeOf(aborted.awaitDecision('b'.repeat(64), 1000)), { kind: 'operational', code: 'CLIENT_TIMEOUT', retryable: true });
});

test('a decision that does not come within the wait is CLIENT_TIMEOUT, not the TIMEOUT refusal', async () => {
  let polls = 0;
  const pending = clientWith((async () => {
    polls++;
    return new Response(JSON.stringify({ status: 'pending' }), { status: 202 });
  }) as typeof fetch);
  const outcome = await codeOf(pending.awaitDecision('c'.repeat(64), 0));
  assert.deepEqual(outcome, { kind: 'operational', code: 'CLIENT_TIMEOUT', retryable: true });
  assert.equal(polls, 0);
});

test('a 202 that is not JSON, or names no statement hash, is INTERNAL', async () => {
  assert.deepEqual(await codeOf(clientWith(answering(202, 'accepted')).propose(proposal)), { kind: 'operational', code: 'INTERNAL', retryable: true });
  assert.deepEqual(await codeOf(clientWith(answering(202, { ok: true })).propose(proposal)), { kind: 'operational', code: 'INTERNAL', retryable: true });
});

test('apiError: 4xx without a code is BAD_ARGUMENT, 404 NOT_FOUND; an operational code is kept; no refusal code for outages', () => {
  assert.equal(apiError(400, null, 'x').code, 'BAD_ARGUMENT');
  assert.equal(apiError(404, { error: { message: 'no' } }, 'x').code, 'NOT_FOUND');
  assert.equal(apiError(400, { error: { code: 'BAD_ARGUMENT', message: 'bad' } }, 'x').code, 'BAD_ARGUMENT');
  assert.equal(apiError(404, { error: { code: 'GRANT_MISSING', message: 'no grant' } }, 'x').code, 'GRANT_MISSING');
  for (const status of [500, 501, 502, 503, 504, 599]) {
    for (const code of ['INTEGRITY_FAILURE', 'SCHEMA_INVALID', 'NO_CHANNEL', undefined]) {
      const err = apiError(status, { error: { code, message: 'm' } }, 'x');
      assert.ok(err instanceof OperationalError && !isReasonCode(err.code), `${status} ${String(code)} -> ${err.code}`);
    }
  }
});
