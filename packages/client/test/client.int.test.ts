import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OperationalError } from '@agent-ledger/refusals';
import { generateSeed, keyIdOf, nodeEd25519 } from '@agent-ledger/core';
import { LedgerClient } from '../src/index.js';

// The SDK against real sockets: a closed port, a server that fails with 500
// and one that never answers. Each is an OperationalError by code.

let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/v1/statements')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'INTEGRITY_FAILURE', message: 'internal error', retryable: true } }));
      return;
    }
    // /v1/decisions: never answers; the client's own wait runs out.
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(baseUrl: string): LedgerClient {
  const seed = generateSeed();
  return new LedgerClient({ baseUrl, signer: { principal: 'agent:test-bot', keyId: keyIdOf(seed, nodeEd25519), seed }, deciderKeys: [], requestTimeoutMs: 300 });
}

const proposal = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: {}, query: 'q', labels: [], channel: 'api' as const, context: {} };

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof OperationalError, `an OperationalError, got ${String(err)}`);
  return err.code;
}

test('a closed port is UNAVAILABLE', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  assert.equal(await failure(client(`http://127.0.0.1:${port}`).propose(proposal)), 'UNAVAILABLE');
});

test('an HTTP 500 is INTERNAL, not the INTEGRITY_FAILURE its body claims', async () => {
  assert.equal(await failure(client(base).propose(proposal)), 'INTERNAL');
});

test('a server that never answers is CLIENT_TIMEOUT', async () => {
  assert.equal(await failure(client(base).awaitDecision('d'.repeat(64), 100)), 'CLIENT_TIMEOUT');
});
