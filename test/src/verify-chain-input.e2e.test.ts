import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, writeFileSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './fixtures.js';

// verify-chain's inputs, as an attacker or an accident hands them over: a
// device that never ends, a FIFO, a huge trust root, a bundle without its
// final newline, a duplicated checkpoint. Each is a typed answer: usage and
// I/O problems exit 2 with an operational code, bad content exits 1 where
// it is.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');
const compat = join(repoRoot, 'test/vectors/compat');
const bundle = join(compat, 'bundle-v1.ndjson');
const trustRoot = join(compat, 'bundle-v1.trust-root.json');
const dir = mkdtempSync(join(tmpdir(), 'ledger-verify-input-'));

function ledger(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repoRoot, timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function assertUsage(r: { status: number | null; stderr: string }, code: string): void {
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`^ledger: ${code}: `));
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

test('a device or a FIFO is not a bundle, nor a trust root: BAD_ARGUMENT, exit 2, without reading it', () => {
  assertUsage(ledger('verify-chain', '/dev/zero', '--trust-root', trustRoot), 'BAD_ARGUMENT');
  assertUsage(ledger('verify-chain', bundle, '--trust-root', '/dev/zero'), 'BAD_ARGUMENT');
  assertUsage(ledger('verify-chain', bundle, '--trust-root', trustRoot, '--known-checkpoint', '/dev/zero'), 'BAD_ARGUMENT');
  assertUsage(ledger('verify-chain', dir, '--trust-root', trustRoot), 'BAD_ARGUMENT');
  const fifo = join(dir, 'bundle.fifo');
  if (spawnSync('mkfifo', [fifo]).status === 0) assertUsage(ledger('verify-chain', fifo, '--trust-root', trustRoot), 'BAD_ARGUMENT');
  assertUsage(ledger('verify-chain', join(dir, 'missing.ndjson'), '--trust-root', trustRoot), 'NOT_FOUND');
  assertUsage(ledger('verify-chain', bundle, '--trust-root', join(dir, 'missing.json')), 'NOT_FOUND');
});

test('a 1 GB trust root is refused by its size, not read', () => {
  const huge = join(dir, 'huge-root.json');
  const fd = openSync(huge, 'w');
  ftruncateSync(fd, 1 << 30);
  closeSync(fd);
  assertUsage(ledger('verify-chain', bundle, '--trust-root', huge), 'BAD_ARGUMENT');
  // Just above the cap is refused too; the genuine trust root, a few hundred bytes, is read.
  writeFileSync(huge, `${readFileSync(trustRoot, 'utf8')}${' '.repeat(64 * 1024)}`);
  assertUsage(ledger('verify-chain', bundle, '--trust-root', huge), 'BAD_ARGUMENT');
});

test('every compat bundle ends with its newline, and without it fails at its last line (SPEC.md section 8)', () => {
  const checked: string[] = [];
  for (const file of readdirSync(compat).filter((f) => f.endsWith('.ndjson'))) {
    const text = readFileSync(join(compat, file), 'utf8');
    assert.ok(text.endsWith('\n'), `${file} ends with a newline`);
    // A compat bundle that fails whole is the compat test's finding (cli.e2e); here only the newline is at stake.
    if (ledger('verify-chain', join(compat, file), '--trust-root', join(compat, file.replace('.ndjson', '.trust-root.json'))).status !== 0) continue;
    checked.push(file);
    const cut = join(dir, `cut-${file}`);
    writeFileSync(cut, text.slice(0, -1));
    const r = ledger('verify-chain', cut, '--trust-root', join(compat, file.replace('.ndjson', '.trust-root.json')), '--json');
    assert.equal(r.status, 1, r.stdout);
    assert.equal((JSON.parse(r.stdout) as { failure: { code: string } }).failure.code, 'SCHEMA_INVALID');
    assert.match(ledger('verify-chain', cut, '--trust-root', join(compat, file.replace('.ndjson', '.trust-root.json'))).stdout, new RegExp(`\\(line ${text.split('\n').length - 1}\\)\\n$`));
  }
  assert.ok(checked.includes('bundle-v1.ndjson'), `checked: ${checked.join(', ')}`);
});

test('a duplicated checkpoint line fails at its own line, not at the end of its partition', () => {
  const lines = readFileSync(bundle, 'utf8').split('\n');
  // The first checkpoint of an events partition that has entries after it.
  const k = lines.findIndex((l, i) => l.startsWith('{"kind":"checkpoint"') && !l.includes('"partition":0') && (lines[i + 1] ?? '').startsWith('{"kind":"entry"'));
  assert.ok(k > 0, 'a checkpoint followed by more entries');
  const partition = (JSON.parse(lines[k] as string) as { partition: number }).partition;
  const sealed = JSON.parse(lines[k - 1] as string) as { partition: number; index: number };
  lines.splice(k + 1, 0, lines[k] as string);
  const doubled = join(dir, 'doubled.ndjson');
  writeFileSync(doubled, lines.join('\n'));
  const r = ledger('verify-chain', doubled, '--trust-root', trustRoot, '--json');
  assert.equal(r.status, 1, r.stdout);
  const failure = (JSON.parse(r.stdout) as { failure: { partition: number; index: number; code: string } }).failure;
  assert.deepEqual(failure, { ...failure, partition, index: sealed.index, code: 'CHECKPOINT_INVALID' });
  assert.match(ledger('verify-chain', doubled, '--trust-root', trustRoot).stdout, new RegExp(`\\(line ${k + 2}\\)\\n$`));
});
