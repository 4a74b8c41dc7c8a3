import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerHome, initHome, readKeyFile } from '@agent-ledger/ledger';

// `ledger init` leaves no root private key in the live installation: they
// are written apart, to be moved offline, and still sign the genesis the
// installation's trust root names.

test('the root private keys are written apart from the installation, owner-only, and match its trust root', () => {
  const parent = mkdtempSync(join(tmpdir(), 'ledger-roots-'));
  const home = initHome(join(parent, 'home'), { apiPort: 0 });
  const live = readdirSync(join(home.dir, 'keys'));
  assert.ok(live.length > 0);
  assert.deepEqual(live.filter((f) => f.startsWith('root-')), [], 'no root key in the installation');
  const rootDir = LedgerHome.defaultRootKeysDir(home.dir);
  assert.equal(rootDir, join(parent, 'home-root-keys'));
  assert.equal(statSync(rootDir).mode & 0o777, 0o700);
  const roots = [1, 2, 3].map((n) => readKeyFile(join(rootDir, `root-${n}.key`)));
  assert.deepEqual(roots.map((r) => r.keyId), home.trustRoot.rootKeys);
  const signers = home.genesis().signatures.map((s) => s.keyId);
  assert.ok(signers.every((k) => home.trustRoot.rootKeys.includes(k)) && signers.length === 2);
});

test('--root-keys DIR is honoured, never inside the installation, and keys of another installation are not overwritten', () => {
  const parent = mkdtempSync(join(tmpdir(), 'ledger-roots-'));
  const elsewhere = join(parent, 'usb-stick');
  initHome(join(parent, 'a'), { apiPort: 0, rootKeysDir: elsewhere });
  assert.ok(existsSync(join(elsewhere, 'root-1.key')));
  assert.equal(existsSync(join(parent, 'a-root-keys')), false);
  assert.throws(() => initHome(join(parent, 'b'), { apiPort: 0, rootKeysDir: join(parent, 'b', 'roots') }), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
  assert.throws(() => initHome(join(parent, 'c'), { apiPort: 0, rootKeysDir: elsewhere }), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
});
