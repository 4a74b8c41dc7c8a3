import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * deploy/systemd checked by systemd itself: `systemd-analyze verify` (unknown
 * directives, bad values, missing executables) and `systemd-analyze security
 * --offline` (exposure of the sandbox). The units start /usr/local/bin/ledger;
 * the copies checked here start this checkout's bin/ledger.js instead, so the
 * executable check looks at something real.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const UNITS = join(ROOT, 'deploy', 'systemd');
const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
const skip = analyze.status === 0 ? false : 'systemd-analyze is not installed here';

function copies(): { dir: string; units: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-units-'));
  const units = readdirSync(UNITS).filter((f) => f.endsWith('.service') || f.endsWith('.target'));
  for (const unit of units) {
    writeFileSync(join(dir, unit), readFileSync(join(UNITS, unit), 'utf8').replaceAll('/usr/local/bin/ledger', join(ROOT, 'services', 'ledger', 'bin', 'ledger.js')));
  }
  return { dir, units };
}

test('systemd-analyze verify accepts every unit', { skip }, () => {
  const { dir, units } = copies();
  try {
    const run = spawnSync('systemd-analyze', ['verify', '--man=no', ...units.map((u) => join(dir, u))], { encoding: 'utf8' });
    assert.equal(run.stderr.trim(), '', run.stderr);
    assert.equal(run.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('systemd-analyze verify refuses a unit with a misspelt directive', { skip }, () => {
  const { dir } = copies();
  try {
    const unit = join(dir, 'ledger-gate.service');
    writeFileSync(unit, readFileSync(unit, 'utf8').replace('NoNewPrivileges=yes', 'NoNewPrivilege=yes'));
    const run = spawnSync('systemd-analyze', ['verify', '--man=no', unit], { encoding: 'utf8' });
    // verify still exits 0 on an unknown key: it says so on stderr, which the test above requires to be empty.
    assert.match(run.stderr, /Unknown key 'NoNewPrivilege' in section \[Service\]/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every service unit is sandboxed: exposure at most 2.0 (systemd-analyze security)', { skip }, () => {
  const { dir, units } = copies();
  try {
    for (const unit of units.filter((u) => u.endsWith('.service'))) {
      const run = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', join(dir, unit)], { encoding: 'utf8' });
      const m = /Overall exposure level for \S+: (\d+\.\d)/.exec(run.stdout);
      assert.ok(m !== null, `${unit}: ${run.stdout.slice(-300)}${run.stderr}`);
      assert.ok(Number(m[1]) <= 2, `${unit}: exposure ${m[1]}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
