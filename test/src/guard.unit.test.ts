import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerClient, guard, trustFromGenesis } from '@agent-ledger/client';
import { TestLedger } from './fixtures.js';

// guard() refuses to be set up or called in ways that could run a tool unchecked, before any request.

const ledger = new TestLedger();
const noNetwork: typeof fetch = () => Promise.reject(new Error('no request may be made'));

test('guard() without a pinned trust is BAD_CONFIGURATION at wrap time', () => {
  const client = new LedgerClient({ baseUrl: 'http://127.0.0.1:1', signer: ledger.agent, deciderKeys: [ledger.gate.keyId], fetch: noNetwork });
  assert.throws(() => guard(async () => 1, { client, describe: () => ({ tool: 't', actionType: 'a', targetResource: 'r' }) }), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
});

test('arguments that are not JSON are BAD_ARGUMENT, and the tool does not run', async () => {
  const genesis = JSON.parse(ledger.lines()[1] as string) as { envelope: Parameters<typeof trustFromGenesis>[0] };
  const client = new LedgerClient({ baseUrl: 'http://127.0.0.1:1', signer: ledger.agent, trust: trustFromGenesis(genesis.envelope), fetch: noNetwork });
  let ran = 0;
  const tool = guard(async (_value: unknown) => { ran += 1; }, { client, describe: () => ({ tool: 't', actionType: 'a', targetResource: 'r' }) });
  const cyclic: { self?: unknown } = {};
  cyclic.self = cyclic;
  await assert.rejects(tool(cyclic), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
  await assert.rejects(tool(10n), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
  assert.equal(ran, 0);
});

test('an unreachable ledger is UNAVAILABLE, and the tool does not run', async () => {
  const genesis = JSON.parse(ledger.lines()[1] as string) as { envelope: Parameters<typeof trustFromGenesis>[0] };
  const client = new LedgerClient({ baseUrl: 'http://127.0.0.1:1', signer: ledger.agent, trust: trustFromGenesis(genesis.envelope), fetch: noNetwork });
  let ran = 0;
  const tool = guard(async () => { ran += 1; }, { client, describe: () => ({ tool: 't', actionType: 'a', targetResource: 'r' }) });
  await assert.rejects(tool(), (err: unknown) => (err as { code?: string }).code === 'UNAVAILABLE');
  assert.equal(ran, 0);
});
