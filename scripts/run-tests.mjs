#!/usr/bin/env node
// Runs the compiled tests of the given tiers with node's test runner. Tiers
// are chosen by file suffix, under every workspace's dist/ and test/dist/:
//   unit   *.unit.test.js   no I/O
//   local  *.local.test.js  files, child processes, the embedded log, PGlite, `ledger dev`: nothing external
//   int    *.int.test.js    the real Kafka broker and/or PostgreSQL server
//   e2e    *.e2e.test.js    the whole stack on Kafka and PostgreSQL, and a browser
//
// `auto` (what `npm test` runs): unit and local always; int and e2e files
// where the services they need answer (Kafka at LEDGER_KAFKA_BROKERS or
// 127.0.0.1:9092, a Metadata request; Postgres at LEDGER_PG_URL or
// 127.0.0.1:5432, `SELECT 1`). It prints what ran and what was left out, and
// why. LEDGER_TEST_REQUIRE_SERVICES=1 makes a missing service an error (CI).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TIERS = ['unit', 'local', 'int', 'e2e'];
const args = process.argv.slice(2);
if (args.length === 0) args.push('unit');
const auto = args.includes('auto');
const tiers = auto ? TIERS : args;
for (const tier of tiers) {
  if (!TIERS.includes(tier)) {
    console.error(`run-tests: unknown tier ${tier} (${TIERS.join(', ')}, or auto)`);
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

/** End-to-end files that run only the built CLI on files: they need no service. */
const OFFLINE_E2E = new Set(['test/dist/cli.e2e.test.js', 'test/dist/verify-chain-input.e2e.test.js']);

/** The services a file of the int or e2e tier needs: a package's own tests need its own service only. */
function needs(file) {
  const path = relative(root, file).split(sep).join('/');
  if (path.endsWith('.unit.test.js') || path.endsWith('.local.test.js') || OFFLINE_E2E.has(path)) return [];
  if (path.startsWith('packages/store/')) return ['postgres'];
  if (path.startsWith('packages/kafka/')) return ['kafka'];
  if (path.startsWith('packages/')) return [];
  return ['kafka', 'postgres'];
}

/** A Kafka Metadata v4 request (as scripts/kafka.sh sends): up when the answer names at least one live broker. */
function kafkaUp(address) {
  const [host, portText] = address.split(':');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(portText) });
    const done = (up) => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(Buffer.from('00000017000300046b666b3100086b61666b612e7368ffffffff00', 'hex')));
    let answer = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length < 16) return;
      done(answer.readUInt32BE(4) === 0x6b666b31 && answer.readInt32BE(12) >= 1);
    });
  });
}

async function postgresUp(url) {
  let pg;
  try {
    pg = (await import('pg')).default;
  } catch {
    return false;
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
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

let selected = files;
if (auto) {
  const kafkaAddress = (process.env.LEDGER_KAFKA_BROKERS ?? '').split(',').map((b) => b.trim()).find((b) => b !== '') ?? '127.0.0.1:9092';
  const pgUrl = process.env.LEDGER_PG_URL || 'postgres://postgres@127.0.0.1:5432/ledger';
  const up = { kafka: await kafkaUp(kafkaAddress), postgres: await postgresUp(pgUrl) };
  console.log(`run-tests: Kafka at ${kafkaAddress}: ${up.kafka ? 'up' : 'not answering'}; PostgreSQL at ${new URL(pgUrl).host}: ${up.postgres ? 'up' : 'not answering'}`);
  const left = files.filter((f) => needs(f).some((service) => !up[service]));
  selected = files.filter((f) => !left.includes(f));
  const count = (list, tier) => list.filter((f) => f.endsWith(`.${tier}.test.js`)).length;
  console.log(`run-tests: running ${TIERS.map((t) => `${t} ${count(selected, t)}`).join(', ')} files`);
  if (left.length > 0) {
    const missing = Object.entries(up).filter(([, isUp]) => !isUp).map(([name]) => name).join(', ');
    console.log(`run-tests: LEFT OUT ${left.length} files needing a service that did not answer (${missing}): ${left.map((f) => `${relative(root, f)} [${needs(f).join('+')}]`).join(' ')}`);
    if (process.env.LEDGER_TEST_REQUIRE_SERVICES === '1') {
      console.error('run-tests: LEDGER_TEST_REQUIRE_SERVICES=1: every suite must run');
      process.exit(1);
    }
  }
} else {
  console.log(`run-tests: ${files.length} files (${tiers.join(', ')})`);
}
const reporter = process.stdout.isTTY ? 'spec' : 'tap';
// A test (and, in node 20, a whole file) still running after LEDGER_TEST_TIMEOUT_MS fails rather than
// holding the run; the default is above the longest file's worst case (the cluster battery, ~25 minutes
// when every wait runs out). Not --test-force-exit: node 20's ends a file while subtests made in loops
// are still to run, and the runner reports the file as passing with those never run.
const timeoutText = process.env.LEDGER_TEST_TIMEOUT_MS ?? '';
const timeoutMs = timeoutText === '' ? 40 * 60_000 : Number(timeoutText);
if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
  console.error(`run-tests: LEDGER_TEST_TIMEOUT_MS must be a positive whole number of milliseconds, not ${timeoutText}`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ['--test', `--test-timeout=${timeoutMs}`, `--test-reporter=${reporter}`, ...selected.map((f) => relative(root, f))], {
  cwd: root,
  stdio: 'inherit',
  // Roles started by the tests log warnings and errors only (LEDGER_LOG_LEVEL=info brings back every request line).
  env: { ...process.env, LEDGER_LOG_LEVEL: process.env.LEDGER_LOG_LEVEL ?? 'warn' },
});
if (auto) console.log(`run-tests: ${selected.length} files ran (unit and local always; int and e2e where their services answered); exit ${result.status}`);
process.exit(result.status ?? 1);
