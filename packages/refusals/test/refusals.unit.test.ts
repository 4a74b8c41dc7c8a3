import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import * as refusals from '../src/index.js';
import { KNOWN_CODES, LedgerError, OPERATIONAL_CODES, OperationalCode, OperationalError, ReasonCode, SILENCE_CODES, formatRefusal, isOperationalCode, isReasonCode, parseRefusal } from '../src/index.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

test('the package exports exactly its documented names', () => {
  assert.deepEqual(Object.keys(refusals).sort(), ['KNOWN_CODES', 'LedgerError', 'OPERATIONAL_CODES', 'OperationalCode', 'OperationalError', 'ReasonCode', 'SILENCE_CODES', 'formatRefusal', 'isOperationalCode', 'isReasonCode', 'parseRefusal']);
});

test('the registry holds every code the product needs', () => {
  for (const code of ['POLICY_VIOLATION', 'RATE_LIMIT', 'UNVERIFIED_TOOL', 'RCE_RISK', 'LOOP_DETECTED', 'INTEGRITY_FAILURE', 'CONTEXT_INJECTION', 'GRANT_MISSING', 'GRANT_EXPIRED', 'GRANT_MISMATCH', 'GRANT_BLOCKED', 'HUMAN_DENIED', 'TIMEOUT', 'NO_CHANNEL', 'INVALID_SIGNATURE', 'KEY_UNKNOWN', 'KEY_REVOKED', 'REPLAY', 'STALE_APPROVAL', 'SCHEMA_INVALID']) {
    assert.ok(isReasonCode(code), code);
  }
  for (const [key, value] of Object.entries(ReasonCode)) assert.equal(key, value);
  assert.deepEqual([...KNOWN_CODES], Object.values(ReasonCode));
});

test('registry, CODES.md and the JSON Schema enum agree in both directions', () => {
  const doc = readFileSync(join(repoRoot, 'packages/refusals/CODES.md'), 'utf8');
  const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \| (?!operational)/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), [...KNOWN_CODES].sort());
  const schema = JSON.parse(readFileSync(join(repoRoot, 'schemas/reason-code.schema.json'), 'utf8')) as { enum: string[] };
  assert.deepEqual([...schema.enum].sort(), [...KNOWN_CODES].sort());
});

test('formatRefusal builds the one textual form and parseRefusal reads it back', () => {
  assert.equal(formatRefusal(ReasonCode.GRANT_MISSING, 'no grant for payment.send'), 'REFUSED: GRANT_MISSING: no grant for payment.send');
  assert.deepEqual(parseRefusal('REFUSED: TIMEOUT: nobody answered'), { code: 'TIMEOUT', detail: 'nobody answered' });
  assert.equal(formatRefusal(ReasonCode.RCE_RISK, 'line one\nline two'), 'REFUSED: RCE_RISK: line one line two');
  assert.throws(() => formatRefusal('NOT_A_CODE' as ReasonCode, 'x'), TypeError);
  fc.assert(
    fc.property(fc.constantFrom(...KNOWN_CODES), fc.string(), (code, detail) => {
      const parsed = parseRefusal(formatRefusal(code, detail));
      assert.ok(parsed !== null);
      assert.equal(parsed.code, code);
      assert.equal(parsed.detail, detail.replace(/[\r\n\u2028\u2029]+/g, ' ').trim());
    }),
    { numRuns: 500 },
  );
});

test('legacy phrasings parse as aliases of documented codes', () => {
  const cases: [string, ReasonCode][] = [
    ['I cannot comply with this request.', 'POLICY_VIOLATION'],
    ['Cannot comply: the action is destructive', 'POLICY_VIOLATION'],
    ['Blocked by policy.', 'POLICY_VIOLATION'],
    ["Sorry, but I can't help with that", 'POLICY_VIOLATION'],
    ['I cannot help with that.', 'POLICY_VIOLATION'],
    ['Unsupported tool: ftp', 'UNVERIFIED_TOOL'],
  ];
  for (const [text, code] of cases) {
    const parsed = parseRefusal(text);
    assert.ok(parsed !== null, text);
    assert.equal(parsed.code, code, text);
    assert.equal(parsed.legacy, true);
    assert.ok(isReasonCode(parsed.code));
  }
});

test('parseRefusal returns null for non-refusals and never throws', () => {
  assert.equal(parseRefusal('all good'), null);
  assert.equal(parseRefusal('REFUSED: NOT_A_CODE: x'), null);
  assert.equal(parseRefusal(''), null);
  assert.equal(parseRefusal(undefined), null);
  assert.equal(parseRefusal(42), null);
  assert.equal(parseRefusal({ toString: () => 'REFUSED: TIMEOUT: x' }), null);
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.anything()), (value) => {
      const parsed = parseRefusal(value);
      assert.ok(parsed === null || isReasonCode(parsed.code));
    }),
    { numRuns: 2000 },
  );
  // Bounded cost: a huge input is read only at its head.
  const huge = `REFUSED: RATE_LIMIT: ${'x'.repeat(5_000_000)}`;
  assert.equal(parseRefusal(huge)?.code, 'RATE_LIMIT');
});

test('silence is never reported as a human denial', () => {
  assert.deepEqual([...SILENCE_CODES].sort(), ['NO_CHANNEL', 'TIMEOUT']);
  assert.ok(!SILENCE_CODES.includes(ReasonCode.HUMAN_DENIED));
  for (const code of SILENCE_CODES) assert.notEqual(parseRefusal(formatRefusal(code, 'no answer'))?.code, 'HUMAN_DENIED');
});

test('LedgerError carries a stable code and retryable flag', () => {
  const err = new LedgerError(ReasonCode.RATE_LIMIT, 'slow down', { retryable: true, cause: 'x' });
  assert.equal(err.code, 'RATE_LIMIT');
  assert.equal(err.retryable, true);
  assert.deepEqual(err.toJSON(), { code: 'RATE_LIMIT', message: 'slow down', retryable: true });
  assert.ok(err instanceof Error);
});

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

test('no module outside packages/refusals builds a refusal string by hand', () => {
  const offenders: string[] = [];
  for (const base of ['packages', 'services']) {
    for (const file of sourceFiles(join(repoRoot, base))) {
      if (file.includes(join('packages', 'refusals'))) continue;
      const text = readFileSync(file, 'utf8');
      // The literal prefix may appear only as a schema check of an already-built string.
      const uses = text.split('\n').filter((line) => line.includes('REFUSED:') && !line.includes("startsWith('REFUSED: ')"));
      if (uses.length > 0) offenders.push(file);
    }
  }
  assert.deepEqual(offenders, []);
});

test('operational codes are a sibling registry: no name is both a refusal and an operational error', () => {
  for (const [key, value] of Object.entries(OperationalCode)) assert.equal(key, value);
  assert.deepEqual([...OPERATIONAL_CODES], Object.values(OperationalCode));
  for (const code of OPERATIONAL_CODES) {
    assert.equal(isReasonCode(code), false, code);
    assert.ok(isOperationalCode(code));
  }
  for (const code of KNOWN_CODES) assert.equal(isOperationalCode(code), false, code);
  assert.throws(() => formatRefusal(OperationalCode.UNAVAILABLE as unknown as ReasonCode, 'broker down'), TypeError);
  const doc = readFileSync(join(repoRoot, 'packages/refusals/CODES.md'), 'utf8');
  const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \| operational/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), [...OPERATIONAL_CODES].sort());
});

test('OperationalError carries its code and retryability across the wire, apart from LedgerError', () => {
  const outage = new OperationalError(OperationalCode.UNAVAILABLE, 'broker unreachable');
  assert.equal(outage.retryable, true);
  assert.deepEqual(outage.toJSON(), { code: 'UNAVAILABLE', message: 'broker unreachable', retryable: true });
  assert.equal(new OperationalError(OperationalCode.BAD_CONFIGURATION, 'bad url').retryable, false);
  assert.equal(new OperationalError(OperationalCode.INTERNAL, 'bug', { retryable: true }).retryable, true);
  assert.equal(outage instanceof LedgerError, false);
});
