import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerError, OperationalError } from '@agent-ledger/refusals';
import { generateSeed, keyIdOf, nodeEd25519, toHex } from '@agent-ledger/core';
import { loadKey } from '../src/index.js';

// loadKey reads a key file as `ledger keygen` writes it, with no other
// import than the SDK's; what is not a key file is a typed error.

const dir = mkdtempSync(join(tmpdir(), 'client-key-'));

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof LedgerError || err instanceof OperationalError);
    return err.code;
  }
  assert.fail('expected an error');
}

test('a key file loads as a signer; tampered, malformed or missing files are typed errors', () => {
  const seed = generateSeed();
  const keyId = keyIdOf(seed, nodeEd25519);
  const file = join(dir, 'agent.key');
  writeFileSync(file, JSON.stringify({ v: 1, principal: 'agent:build-bot', keyId, seed: toHex(seed) }));
  const signer = loadKey(file);
  assert.deepEqual([signer.principal, signer.keyId, toHex(signer.seed)], ['agent:build-bot', keyId, toHex(seed)]);

  writeFileSync(file, JSON.stringify({ v: 1, principal: 'agent:build-bot', keyId: 'a'.repeat(64), seed: toHex(seed) }));
  assert.equal(codeOf(() => loadKey(file)), 'INTEGRITY_FAILURE');
  writeFileSync(file, JSON.stringify({ v: 1, principal: 'agent:build-bot', keyId, seed: toHex(seed), extra: true }));
  assert.equal(codeOf(() => loadKey(file)), 'SCHEMA_INVALID');
  writeFileSync(file, '{"v":1,"v":1}');
  assert.equal(codeOf(() => loadKey(file)), 'SCHEMA_INVALID');
  assert.equal(codeOf(() => loadKey(join(dir, 'missing.key'))), 'NOT_FOUND');
  assert.equal(codeOf(() => loadKey(dir)), 'BAD_ARGUMENT');
});
