import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dequoteShell, normalizeText, wordForm } from '../src/index.js';
import { OBFUSCATIONS, ansi, fullWidth, mixedCase, nul, zeroWidth } from './support.js';

test('normalizeText removes ANSI escapes, NUL and invisible characters, applies NFKC, folds case, collapses whitespace', () => {
  assert.equal(normalizeText('\u001b[31mrm\u001b[0m -rf /'), 'rm -rf /');
  assert.equal(normalizeText('r\u0000m -rf /'), 'rm -rf /');
  assert.equal(normalizeText('ｒｍ\u3000－ｒｆ\u3000／'), 'rm -rf /');
  assert.equal(normalizeText('RM  -Rf\t\n /'), 'rm -rf /');
  assert.equal(normalizeText('r\u200bm\u00ad -rf\u202e /'), 'rm -rf /');
  assert.equal(normalizeText('r\u0332m -rf /'), 'rm -rf /', 'stray combining marks');
  assert.equal(normalizeText('\u001b\u0000[0mrm'), 'rm', 'a NUL cannot split an escape sequence');
  assert.equal(normalizeText('\u009b1mrm'), 'rm', '8-bit CSI');
  assert.equal(normalizeText('  plain ascii  '), 'plain ascii');
  assert.equal(normalizeText(''), '');
});

test('wordForm and dequoteShell', () => {
  assert.equal(wordForm('credentials.share/api-keys'), 'credentials share api keys');
  assert.equal(dequoteShell(`r''m "-rf" \\/`), 'rm -rf /');
  assert.equal(dequoteShell('rm${ifs}-rf$ifs/'), 'rm -rf /');
  assert.equal(dequoteShell(`$'rm' -rf /`), 'rm -rf /');
  const plain = 'ls -la';
  assert.equal(dequoteShell(plain), plain);
});

test('normalisation is idempotent and every obfuscation of printable ASCII normalises back (property)', () => {
  const printable = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -/|&;:.*~$>(){}'.split('')) });
  fc.assert(
    fc.property(printable, fc.subarray([...OBFUSCATIONS.keys()]), (text, picks) => {
      let hidden = text;
      for (const i of picks) hidden = (OBFUSCATIONS[i] as (typeof OBFUSCATIONS)[number])[1](hidden);
      const normal = normalizeText(text);
      assert.equal(normalizeText(hidden), normal);
      assert.equal(normalizeText(normal), normal);
    }),
    { numRuns: 2000 },
  );
  assert.equal(normalizeText(zeroWidth(nul(ansi(fullWidth(mixedCase('git push --force')))))), 'git push --force');
});

test('normalizeText never throws (property)', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => typeof normalizeText(text) === 'string'));
});
