import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';
import { assertJsonFailure } from './cli-json-shape.js';

// The built `ledger` binary, driven as a user would drive it.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

function ledger(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repoRoot });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-'));
const bundle = join(dir, 'bundle.ndjson');
const trustRoot = join(dir, 'trust-root.json');

test('every command has --help', () => {
  for (const command of ['verify-chain', 'verify-receipt', 'receipt', 'demo', 'keygen', 'genesis', 'schemas']) {
    const r = ledger(command, '--help');
    assert.equal(r.status, 0, command);
    assert.match(r.stdout, new RegExp(`Usage: ledger ${command}`));
  }
  assert.equal(ledger('--help').status, 0);
});

test('demo then verify-chain: valid, and exit codes 0 / 1 / 2', () => {
  const demo = ledger('demo', '--events', '400', '--out', bundle, '--trust-root-out', trustRoot);
  assert.equal(demo.status, 0, demo.stderr);
  assert.match(demo.stdout, /refusals by code: .*HUMAN_DENIED=/);

  const ok = ledger('verify-chain', bundle, '--trust-root', trustRoot, '--json');
  assert.equal(ok.status, 0, ok.stderr);
  const report = JSON.parse(ok.stdout) as { ok: boolean; entries: number; failure: unknown };
  assert.equal(report.ok, true);
  assert.ok(report.entries >= 400);
  assert.equal(report.failure, null);
  assert.match(ledger('verify-chain', bundle, '--trust-root', trustRoot).stdout, /^OK: \d+ entries verified/);

  // One changed byte inside a signed statement: exit 1, named position and code.
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const k = lines.findIndex((l) => l.includes('"type":"human.response"'));
  const tampered = join(dir, 'tampered.ndjson');
  lines[k] = (lines[k] as string).replace('"answer":"deny"', '"answer":"approve"').replace('"answer":"approve"', '"answer":"deny"');
  writeFileSync(tampered, lines.join('\n'));
  const bad = ledger('verify-chain', tampered, '--trust-root', trustRoot, '--json');
  const failure = (assertJsonFailure(bad, 'verify-chain of a tampered bundle', 'INVALID_SIGNATURE') as { failure: { partition: number; index: number; code: string } }).failure;
  const entry = JSON.parse(lines[k] as string) as { partition: number; index: number };
  assert.deepEqual(failure, { ...failure, partition: entry.partition, index: entry.index, code: 'INVALID_SIGNATURE' });
  assert.match(ledger('verify-chain', tampered, '--trust-root', trustRoot).stdout, /^FAIL: partition \d+ index \d+: INVALID_SIGNATURE: /);

  // An unparseable line is content, not usage: exit 1.
  writeFileSync(tampered, `${readFileSync(bundle, 'utf8')}{not json\n`);
  assert.equal(ledger('verify-chain', tampered, '--trust-root', trustRoot).status, 1);

  // Usage and I/O errors: exit 2.
  assert.equal(ledger('verify-chain', join(dir, 'missing.ndjson'), '--trust-root', trustRoot).status, 2);
  assert.equal(ledger('verify-chain', bundle).status, 2);
  assert.equal(ledger('verify-chain', bundle, '--trust-root', bundle).status, 2);
  assert.equal(ledger('verify-chain', bundle, '--trust-root', trustRoot, '--no-such-flag').status, 2);
  assert.equal(ledger('no-such-command').status, 2);
});

test('a pinned trust root of another ledger rejects the bundle', () => {
  const otherRoot = join(dir, 'other-root.json');
  const other = ledger('demo', '--events', '60', '--out', join(dir, 'other.ndjson'), '--trust-root-out', otherRoot);
  assert.equal(other.status, 0, other.stderr);
  const r = ledger('verify-chain', bundle, '--trust-root', otherRoot, '--json');
  assert.equal(r.status, 1);
  assert.equal((JSON.parse(r.stdout) as { failure: { index: number } }).failure.index, 0);
});

test('receipt and verify-receipt', () => {
  const receipt = join(dir, 'receipt.json');
  const made = ledger('receipt', '--bundle', bundle, '--partition', '1', '--index', '5', '--out', receipt);
  assert.equal(made.status, 0, made.stderr);
  const ok = ledger('verify-receipt', receipt, '--trust-root', trustRoot, '--json');
  assert.equal(ok.status, 0, ok.stdout);
  assert.equal((JSON.parse(ok.stdout) as { ok: boolean }).ok, true);

  const value = JSON.parse(readFileSync(receipt, 'utf8')) as { entry: { index: number }; inclusionProof: string[] };
  value.entry.index += 1;
  writeFileSync(receipt, JSON.stringify(value));
  const moved = ledger('verify-receipt', receipt, '--trust-root', trustRoot, '--json');
  // The refusal's code, and as before `code` beside `error` (examples/curl-agent.sh reads it).
  assert.equal(assertJsonFailure(moved, 'verify-receipt of a moved entry', 'INTEGRITY_FAILURE')['code'], 'INTEGRITY_FAILURE');
  writeFileSync(receipt, '{"v":1,"v":1}');
  assert.equal((JSON.parse(ledger('verify-receipt', receipt, '--trust-root', trustRoot, '--json').stdout) as { code: string }).code, 'SCHEMA_INVALID');
});

test('keygen writes an owner-only key; genesis signs with the root threshold', () => {
  const keys = ['root:1', 'root:2', 'admin:alice', 'sequencer:main'].map((principal) => {
    const file = join(dir, `${principal.replace(':', '-')}.key`);
    const r = ledger('keygen', '--principal', principal, '--out', file);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f]{64}\n$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    return file;
  });
  assert.equal(ledger('keygen', '--principal', 'admin:alice', '--out', keys[2] as string).status, 2, 'refuses to overwrite');
  assert.equal(ledger('keygen', '--principal', 'not a principal', '--out', join(dir, 'x.key')).status, 2);
  const g = ledger('genesis', '--origin', 'ledger.example/prod', '--root-key', keys[0] as string, '--root-key', keys[1] as string, '--threshold', '2', '--key', `${keys[2]}=admin`, '--key', `${keys[3]}=sequencer`, '--out', join(dir, 'genesis.json'), '--trust-root-out', join(dir, 'prod-root.json'));
  assert.equal(g.status, 0, g.stderr);
  const genesis = JSON.parse(readFileSync(join(dir, 'genesis.json'), 'utf8')) as { signatures: unknown[]; statement: { type: string } };
  assert.equal(genesis.statement.type, 'genesis');
  assert.equal(genesis.signatures.length, 2);
  assert.equal(ledger('genesis', '--origin', 'o', '--root-key', keys[0] as string, '--threshold', '2', '--key', `${keys[2]}=admin`, '--out', join(dir, 'g2.json'), '--trust-root-out', join(dir, 'r2.json')).status, 2);
});

test('every compat bundle ever emitted still verifies', () => {
  const compat = join(repoRoot, 'test/vectors/compat');
  const bundles = readdirSync(compat).filter((f) => f.endsWith('.ndjson'));
  assert.ok(bundles.length >= 1);
  for (const file of bundles) {
    const r = ledger('verify-chain', join(compat, file), '--trust-root', join(compat, file.replace('.ndjson', '.trust-root.json')), '--json');
    assert.equal(r.status, 0, `${file}: ${r.stdout}`);
  }
});

test('schemas on disk match the zod sources', () => {
  const r = ledger('schemas', '--out', join(repoRoot, 'schemas'), '--check');
  assert.equal(r.status, 0, r.stderr);
});
