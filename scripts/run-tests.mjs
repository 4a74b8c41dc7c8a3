#!/usr/bin/env node
// Runs the compiled tests of the given tiers (unit, int, e2e) with node's test
// runner. Tiers are chosen by file suffix: *.unit.test.js, *.int.test.js,
// *.e2e.test.js, under every workspace's dist/ and test/dist/.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tiers = process.argv.slice(2);
if (tiers.length === 0) tiers.push('unit');
for (const tier of tiers) {
  if (!['unit', 'int', 'e2e'].includes(tier)) {
    console.error(`run-tests: unknown tier ${tier} (unit, int, e2e)`);
    process.exit(2);
  }
}

function walk(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (tiers.some((t) => name.endsWith(`.${t}.test.js`))) out.push(path);
  }
  return out;
}

const files = [];
for (const base of ['packages', 'services']) {
  for (const pkg of readdirSync(join(root, base))) walk(join(root, base, pkg, 'dist'), files);
}
walk(join(root, 'test', 'dist'), files);
files.sort();
if (files.length === 0) {
  console.error(`run-tests: no compiled ${tiers.join('/')} tests found; run npm run build first`);
  process.exit(1);
}
console.log(`run-tests: ${files.length} files (${tiers.join(', ')})`);
const reporter = process.stdout.isTTY ? 'spec' : 'tap';
const result = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, ...files.map((f) => relative(root, f))], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
