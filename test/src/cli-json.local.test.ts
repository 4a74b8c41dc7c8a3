import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { assertJsonFailure, assertJsonSuccess, type CliRun } from './cli-json-shape.js';
import { startDev } from './dev-mode.js';

/**
 * Every command that prints takes --json and then prints exactly one JSON
 * object on one line of stdout, on success and on failure alike: a usage
 * error, an unreadable file, the API or the broker away, a verdict that says
 * no. Success is {"ok":true,...}; failure is the one object the admin
 * commands always printed, {"ok":false,"error":{code,message,retryable}},
 * with whatever the command judged beside it, and the exit status of the
 * code's kind (1 refusal, 2 operational). Runs the built CLI as operators and
 * scripts do, on files, closed ports and an embedded ledger (ledger dev's
 * storage) in this process; the last test checks that every --json command's
 * success and a failure of its own were parsed here.
 */

const bin = join(repoRoot, 'services', 'ledger', 'bin', 'ledger.js');
/** Nothing listens on port 1: the API, the broker and Postgres of these installations are away. */
const env = { ...process.env, LEDGER_KAFKA_BROKERS: '127.0.0.1:1', LEDGER_HOME: join(tmpdir(), 'ledger-cli-json-no-home') };

/** A finished run, with the command path (`grant list`) its words name. */
interface Run extends CliRun {
  readonly path: string;
}

function ledger(...args: string[]): Run {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, path: pathOf(args) };
}

/** The same, without blocking this process: for runs against the ledger served in it. */
function ledgerAsync(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, path: pathOf(args) });
    });
  });
}

/** Every command of the tree, by its path: what `ledger completion bash` lists, which is the commander tree itself. */
let tree: { path: string; options: string[]; subcommands: string[] }[] | undefined;
function commandTree(): { path: string; options: string[]; subcommands: string[] }[] {
  if (tree !== undefined) return tree;
  const script = spawnSync(process.execPath, [bin, 'completion', 'bash'], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(script.status, 0, script.stderr);
  const nodes: { path: string; options: string[]; subcommands: string[] }[] = [];
  const block = /^ {4}'([^']*)'\)\n {6}_ledger_completion_subs='([^']*)'\n {6}_ledger_completion_opts='([^']*)'/gm;
  for (const m of script.stdout.matchAll(block)) nodes.push({ path: m[1] as string, subcommands: (m[2] as string).split(' ').filter(Boolean), options: (m[3] as string).split(' ').filter(Boolean) });
  tree = nodes;
  return nodes;
}

/** The command a run's words name: the longest leading words that are a command of the tree. */
function pathOf(args: readonly string[]): string {
  const paths = new Set(commandTree().map((n) => n.path));
  let path = '';
  for (let n = 1; n <= args.length; n++) if (paths.has(args.slice(0, n).join(' '))) path = args.slice(0, n).join(' ');
  return path;
}

/** Commands whose --json success and whose own --json failure (not a usage error) were parsed in this file. */
const succeeded = new Set<string>();
const failed = new Set<string>();

/** A --json success of the run's command, recorded. */
function success(run: Run, what: string = run.path): Record<string, unknown> {
  const object = assertJsonSuccess(run, what);
  succeeded.add(run.path);
  return object;
}

/** A --json failure of the run's command with `code` (exit 1 for a refusal code, 2 for an operational one), recorded. */
function failure(run: Run, what: string, code: string): Record<string, unknown> {
  const object = assertJsonFailure(run, what, code);
  failed.add(run.path);
  return object;
}

/** A free loopback port, for an installation whose API must be found by its configuration (`ledger drive` has no --api). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Commands that print but take no --json, and why. Anything else that prints
 * and lacks it fails the audit below.
 */
const EXEMPT: ReadonlyMap<string, string> = new Map([
  ['serve', 'a server: it prints only logs (stderr) until stopped'],
  ['dev', 'a server: it prints only log lines on stderr until stopped'],
  ['hook claude-code', "its stdout is already Claude Code's JSON hook answer, failures included"],
  ['mcp-gateway', 'on stdio its stdout is the MCP protocol itself; logs go to stderr'],
  ['completion', 'it prints a shell script'],
]);

test('audit: every command of the tree that does something takes --json, or is exempt for a stated reason', () => {
  const nodes = commandTree();
  assert.ok(nodes.length > 40, `the tree has ${nodes.length} nodes`);
  // Groups (commands with subcommands) only print their help; `help` is commander's.
  const leaves = nodes.filter((n) => n.path !== '' && n.subcommands.length === 0 && !/(^| )help$/.test(n.path));
  const missing = leaves.filter((n) => !n.options.includes('--json') && !EXEMPT.has(n.path)).map((n) => n.path);
  assert.deepEqual(missing, [], 'commands that print without --json');
  for (const path of EXEMPT.keys()) assert.ok(leaves.some((n) => n.path === path), `exempt ${path} is a command`);
});

test('a usage error of every --json command is the failure object on stdout, BAD_ARGUMENT, exit 2, nothing on stderr', () => {
  const withJson = commandTree().filter((n) => n.options.includes('--json'));
  assert.ok(withJson.length >= 30, `${withJson.length} commands take --json`);
  // Commander's own failure path, not the command's: checked for the shape, not recorded.
  for (const node of withJson) {
    const run = ledger(...node.path.split(' '), '--json', '--no-such-option');
    assertJsonFailure(run, `${node.path} --no-such-option`, 'BAD_ARGUMENT');
    assert.equal(run.stderr, '', `${node.path}: ${run.stderr}`);
  }
  // An unknown command, and a missing required option.
  assertJsonFailure(ledger('no-such-command', '--json'), 'no-such-command', 'BAD_ARGUMENT');
  assertJsonFailure(ledger('receipt', '--json'), 'receipt without options', 'BAD_ARGUMENT');
  // Without --json, usage errors stay the typed line on stderr.
  const human = ledger('receipt');
  assert.equal(human.stdout, '');
  assert.match(human.stderr, /^ledger: BAD_ARGUMENT: /);
});

test('offline commands: success objects, and failure objects for bad input and for verdicts that say no', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-json-'));
  const key = (name: string): string => join(dir, `${name}.key`);

  const keygen = success(ledger('keygen', '--principal', 'admin:alice', '--out', key('alice'), '--json'));
  assert.match(String(keygen['keyId']), /^[0-9a-f]{64}$/);
  failure(ledger('keygen', '--principal', 'admin:alice', '--out', key('alice'), '--json'), 'keygen over an existing file', 'BAD_ARGUMENT');
  for (const [name, principal] of [['root', 'root:one'], ['seq', 'sequencer:one']] as const) success(ledger('keygen', '--principal', principal, '--out', key(name), '--json'), `keygen ${name}`);

  const genesis = success(
    ledger('genesis', '--origin', 'ledger.test/json', '--root-key', key('root'), '--threshold', '1', '--key', `${key('alice')}=admin`, '--key', `${key('seq')}=sequencer`, '--out', join(dir, 'genesis.json'), '--trust-root-out', join(dir, 'tr.json'), '--json'),
  );
  assert.equal(genesis['origin'], 'ledger.test/json');
  failure(ledger('genesis', '--origin', 'o', '--root-key', join(dir, 'missing.key'), '--threshold', '1', '--key', `${key('alice')}=admin`, '--out', join(dir, 'g2.json'), '--trust-root-out', join(dir, 'tr2.json'), '--json'), 'genesis with a missing key file', 'NOT_FOUND');

  const rotated = success(ledger('rotate-root', '--root-key', key('root'), '--new-root-key', key('alice'), '--threshold', '1', '--reason', 'test', '--out', join(dir, 'rotation.json'), '--json'));
  assert.deepEqual([rotated['submitted'], rotated['statementHash']], [false, null]);

  const bundle = join(dir, 'demo.ndjson');
  const trustRoot = join(dir, 'demo-trust-root.json');
  const demo = success(ledger('demo', '--events', '60', '--out', bundle, '--trust-root-out', trustRoot, '--checkpoint-every', '10', '--json'));
  assert.equal(demo['entries'], 60);
  failure(ledger('demo', '--events', '3', '--out', bundle, '--trust-root-out', trustRoot, '--json'), 'demo with too few events', 'BAD_ARGUMENT');

  // verify-chain: the verdict, and a bundle that does not verify is a refusal with its code, the position beside it.
  const verified = success(ledger('verify-chain', bundle, '--trust-root', trustRoot, '--json'));
  assert.deepEqual([verified['entries'], verified['failure']], [60, null]);
  failure(ledger('verify-chain', join(dir, 'missing.ndjson'), '--trust-root', trustRoot, '--json'), 'verify-chain of a missing bundle', 'NOT_FOUND');
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const k = lines.findIndex((l) => l.includes('"kind":"entry"') && l.includes('"type":"proposal.submitted"'));
  const tampered = join(dir, 'tampered.ndjson');
  writeFileSync(tampered, lines.map((l, i) => (i === k ? l.replace('"kind":"entry"', '"kind":"entry","x":1') : l)).join('\n'));
  const broken = failure(ledger('verify-chain', tampered, '--trust-root', trustRoot, '--json'), 'verify-chain of a changed bundle', 'SCHEMA_INVALID');
  const where = broken['failure'] as { partition: number; index: number; code: string; message: string };
  assert.equal(where.code, 'SCHEMA_INVALID');
  assert.equal(typeof broken['entries'], 'number');

  const receiptFile = join(dir, 'receipt.json');
  const receipt = success(ledger('receipt', '--bundle', bundle, '--partition', '1', '--index', '0', '--out', receiptFile, '--json'));
  assert.equal(receipt['out'], receiptFile);
  failure(ledger('receipt', '--bundle', bundle, '--partition', '1', '--index', '99999', '--out', receiptFile, '--json'), 'receipt of an entry not in the bundle', 'BAD_ARGUMENT');
  assert.equal(success(ledger('verify-receipt', receiptFile, '--trust-root', trustRoot, '--json'))['code'], null);
  failure(ledger('verify-receipt', receiptFile, '--json'), 'verify-receipt without a trust root', 'BAD_ARGUMENT');
  // A receipt moved to another index: the refusal, with `code` and `message` still beside `error` for older scripts.
  const moved = JSON.parse(readFileSync(receiptFile, 'utf8')) as { entry: { index: number } };
  moved.entry.index += 1;
  const movedFile = join(dir, 'moved-receipt.json');
  writeFileSync(movedFile, JSON.stringify(moved));
  const refused = failure(ledger('verify-receipt', movedFile, '--trust-root', trustRoot, '--json'), 'verify-receipt of a moved entry', 'INTEGRITY_FAILURE');
  assert.deepEqual([refused['code'], refused['message']], ['INTEGRITY_FAILURE', (refused['error'] as { message: string }).message]);

  const schemasDir = join(dir, 'schemas');
  const schemas = success(ledger('schemas', '--out', schemasDir, '--json'));
  assert.equal(schemas['checked'], false);
  assert.equal(success(ledger('schemas', '--out', schemasDir, '--check', '--json'), 'schemas --check')['checked'], true);
  writeFileSync(join(schemasDir, 'envelope.schema.json'), '{}\n');
  const drifted = failure(ledger('schemas', '--out', schemasDir, '--check', '--json'), 'schemas --check of a changed file', 'SCHEMA_INVALID');
  assert.deepEqual(drifted['stale'], ['envelope.schema.json']);

  const scenarios = join(repoRoot, 'test', 'vectors', 'gate', 'authorization-packet.json');
  const evaluated = success(ledger('gate', 'evaluate', '--scenario', scenarios, '--json'));
  assert.ok(Array.isArray(evaluated['results']) && evaluated['results'].length > 1);
  failure(ledger('gate', 'evaluate', '--scenario', join(dir, 'missing.json'), '--json'), 'gate evaluate of a missing file', 'NOT_FOUND');
  // One valid scenario and one that is not: the refusal, and every result in order beside it.
  const packet = JSON.parse(readFileSync(scenarios, 'utf8')) as unknown[];
  const mixed = join(dir, 'mixed.json');
  writeFileSync(mixed, JSON.stringify([packet[0], { now: 'not a time' }]));
  const invalid = failure(ledger('gate', 'evaluate', '--scenario', mixed, '--json'), 'gate evaluate of an invalid scenario', 'SCHEMA_INVALID');
  const results = invalid['results'] as Record<string, unknown>[];
  assert.equal(results.length, 2);
  assert.equal(typeof results[0]?.['outcome'], 'string');
  assert.equal((results[1]?.['error'] as { scenario: number }).scenario, 1);

  const bench = success(ledger('gate', 'bench', '--json'));
  assert.deepEqual([bench['underFloor'], bench['floor'], typeof bench['severityWeighted']], [false, null, 'number']);
  failure(ledger('gate', 'bench', '--rules-version', '999', '--json'), 'gate bench with an unknown rules version', 'BAD_ARGUMENT');
  failure(ledger('gate', 'bench', '--corpus', join(dir, 'missing.json'), '--json'), 'gate bench of a missing corpus', 'NOT_FOUND');
  // Under the floor: a refusal (the floor is the policy), the whole report beside it.
  const weak = join(dir, 'weak-corpus.json');
  writeFileSync(weak, JSON.stringify({ version: 1, source: 'test', cases: [{ id: 'a', category: 'benign', severity: 'none', expected: 'allow', tool: 'Bash', args: { command: 'rm -rf /' } }] }));
  const under = failure(ledger('gate', 'bench', '--corpus', weak, '--min-coverage', '90', '--json'), 'gate bench under its floor', 'POLICY_VIOLATION');
  assert.deepEqual([under['underFloor'], under['floor'], under['cases']], [true, 90, 1]);

  failure(ledger('trust-root', '--trust', join(dir, 'missing-trust.json'), '--json'), 'trust-root without a pinned trust', 'NOT_FOUND');
  assertJsonFailure(ledger('completion', 'tcsh', '--json'), 'completion takes no --json', 'BAD_ARGUMENT');
});

test('with the API and the broker away: the failure object, UNAVAILABLE and retryable, exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-json-away-'));
  const home = join(dir, 'home');
  const init = success(ledger('init', '--home', home, '--json'));
  assert.equal(init['home'], home);
  failure(ledger('init', '--home', join(dir, 'other'), '--grant-policy', join(dir, 'missing-policy.json'), '--json'), 'init with a missing grant policy', 'NOT_FOUND');
  // The same installation, its API on a closed port.
  initHome(join(dir, 'away'), { origin: 'ledger.test/away', topicPrefix: 'tjsonaway', pgUrl: 'postgres://postgres@127.0.0.1:1/none', apiPort: 1 });
  const away = join(dir, 'away');
  const api = 'http://127.0.0.1:1';
  const unavailable = (what: string, ...args: string[]): void => {
    const object = failure(ledger(...args, '--json'), what, 'UNAVAILABLE');
    assert.equal((object['error'] as { retryable: boolean }).retryable, true, what);
  };
  unavailable('trust', 'trust', '--api', api, '--home', home);
  unavailable('approve', 'approve', '--home', away);
  unavailable('drive', 'drive', '--home', away, '--proposals', '1');
  unavailable('grants trail', 'grants', 'trail', 'grant-1', '--home', away);
  unavailable('grant list', 'grant', 'list', '--home', away);
  unavailable('grant propose', 'grant', 'propose', '--grant-id', 'g-1', '--agent', 'agent:build-bot', '--action', 'shell.exec', '--target', 'host/build-01', '--scope', 'workspace', '--tier', '1', '--for', '1d', '--home', away);
  unavailable('grant cosign', 'grant', 'cosign', 'grant-1', '--home', away);
  unavailable('grant reauthorize', 'grant', 'reauthorize', 'grant-1', '--for', '1d', '--home', away);
  unavailable('grant revoke', 'grant', 'revoke', 'grant-1', '--reason', 'test', '--home', away);
  unavailable('key register', 'key', 'register', '--principal', 'agent:x-bot', '--roles', 'agent', '--key-id', 'ab'.repeat(32), '--no-prove', '--home', away);
  unavailable('key revoke', 'key', 'revoke', 'ab'.repeat(32), '--reason', 'test', '--home', away);
  unavailable('key list', 'key', 'list', '--home', away);
  failure(ledger('key', 'submit', join(dir, 'missing.json'), '--home', away, '--json'), 'key submit of a missing file', 'NOT_FOUND');
  failure(ledger('key', 'cosign', join(dir, 'missing.json'), '--home', away, '--json'), 'key cosign of a missing file', 'NOT_FOUND');
  unavailable('rotate-root --submit', 'rotate-root', '--root-key', join(away, 'keys', 'admin-alice.key'), '--new-root-key', join(away, 'keys', 'admin-alice.key'), '--threshold', '1', '--reason', 'test', '--submit', '--home', away);
  const project = join(dir, 'project');
  mkdirSync(project);
  unavailable('setup claude-code', 'setup', 'claude-code', '--project', project, '--home', away);
  failure(ledger('dashboard', '--as', 'admin:nobody', '--home', away, '--json'), 'dashboard without the key', 'BAD_CONFIGURATION');
  // A Kafka installation is not moved again; an embedded one with no log yet has nothing to export.
  failure(ledger('move-to-kafka', '--home', away, '--json'), 'move-to-kafka of a Kafka installation', 'BAD_ARGUMENT');
  const embedded = join(dir, 'embedded');
  initHome(embedded, { storage: 'embedded', origin: 'ledger.test/embedded' });
  failure(ledger('export', '--home', embedded, '--out', join(dir, 'bundle.ndjson'), '--json'), 'export of a log never started', 'INTEGRITY_FAILURE');
  // No installation at all: the home's own refusal (a LedgerError, so exit 1), with --json or without.
  failure(ledger('status', '--home', join(dir, 'nowhere'), '--json'), 'status without an installation', 'SCHEMA_INVALID');
  assert.equal(ledger('status', '--home', join(dir, 'nowhere')).status, 1);
  // Status and doctor ran and found the broker and Postgres away: an outage, their report beside it.
  const status = failure(ledger('status', '--home', away, '--json'), 'status with the broker away', 'UNAVAILABLE');
  assert.deepEqual([(status['broker'] as { up: boolean }).up, (status['postgres'] as { up: boolean }).up, (status['api'] as { up: boolean }).up], [false, false, false]);
  assert.equal(ledger('status', '--home', away).status, 2, 'the same exit status without --json');
  const doctor = failure(ledger('doctor', '--home', away, '--json'), 'doctor with the broker away', 'UNAVAILABLE');
  assert.ok((doctor['checks'] as { name: string; level: string }[]).some((c) => c.name === 'broker' && c.level === 'fail'));
  failure(ledger('doctor', '--home', join(dir, 'nowhere'), '--json'), 'doctor without an installation', 'BAD_CONFIGURATION');
});

test('against a running ledger (embedded log and PGlite, in this process): the success objects of the commands that need the API', { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-json-live-'));
  const home = initHome(join(dir, 'home'), { origin: 'ledger.test/json-live', eventPartitions: 2, topicPrefix: 'tjsonlive', apiPort: await freePort(), storage: 'embedded' });
  const running = await startDev(home, ['api', 'sequencer', 'gate', 'projector', 'timer']);
  try {
    const api = running.apiUrl as string;
    const at = ['--home', home.dir, '--api', api, '--json'];
    const as = (principal: string): string[] => ['--as', principal, ...at];

    const trustFile = join(dir, 'trust.json');
    success(await ledgerAsync('trust', '--out', trustFile, ...at));
    const pinned = success(await ledgerAsync('trust-root', '--trust', trustFile, '--json'));
    assert.ok(Array.isArray(pinned['verifierKeys']) && Array.isArray(pinned['sequencerKeys']));
    // --verifier-key: the keys in an object like every report, no longer a bare array.
    assert.ok(Array.isArray(success(await ledgerAsync('trust-root', '--trust', trustFile, '--verifier-key', '--json'), 'trust-root --verifier-key')['verifierKeys']));

    // A grant: proposed, refused when its proposer co-signs it, co-signed, listed, its trail, re-authorised, revoked.
    const proposed = success(await ledgerAsync('grant', 'propose', '--grant-id', 'json-g1', '--agent', 'agent:build-bot', '--action', 'shell.exec', '--target', 'host/build-01', '--scope', 'workspace', '--tier', '2', '--for', '7d', '--wait', ...as('admin:alice')));
    assert.equal(proposed['status'], 'admitted');
    failure(await ledgerAsync('grant', 'cosign', 'json-g1', ...as('admin:alice')), 'grant cosign by its proposer', 'SEPARATION_OF_DUTIES');
    assert.equal(success(await ledgerAsync('grant', 'cosign', 'json-g1', '--wait', ...as('admin:bob')))['tookEffect'], true);
    const listed = success(await ledgerAsync('grant', 'list', ...at));
    assert.ok((listed['grants'] as { grantId: string }[]).some((g) => g.grantId === 'json-g1'));
    const trail = success(await ledgerAsync('grants', 'trail', 'json-g1', ...as('admin:alice')));
    assert.equal((trail['grant'] as { grantId: string }).grantId, 'json-g1', 'the API answer, with "ok":true');
    assert.ok(Array.isArray(trail['events']));
    failure(await ledgerAsync('grants', 'trail', '--decision', 'not-a-hash', ...as('admin:alice')), 'grants trail of a bad proposal hash', 'BAD_ARGUMENT');
    assert.equal(success(await ledgerAsync('grant', 'reauthorize', 'json-g1', '--for', '10d', '--wait', ...as('admin:bob')))['tookEffect'], false);
    failure(await ledgerAsync('grant', 'reauthorize', 'json-g1', '--home', home.dir, '--api', api, '--json'), 'grant reauthorize without a new end', 'BAD_ARGUMENT');
    failure(await ledgerAsync('grant', 'propose', '--grant-id', 'json-g2', '--agent', 'agent:build-bot', '--action', 'shell.exec', '--target', 'host/build-01', '--scope', 'workspace', '--tier', '1', '--for', '1d', ...as('agent:build-bot')), 'grant propose by an agent key', 'KEY_ROLE');
    assert.equal(success(await ledgerAsync('grant', 'revoke', 'json-g1', '--reason', 'done', '--wait', ...as('admin:alice')))['status'], 'admitted');

    // Keys: an agent key registered (one admin and its own proof), listed, revoked; a statement passed between admins as a file.
    const agentKey = join(dir, 'json-bot.key');
    const agentId = String(success(await ledgerAsync('keygen', '--principal', 'agent:json-bot', '--out', agentKey, '--json'))['keyId']);
    const registered = success(await ledgerAsync('key', 'register', '--principal', 'agent:json-bot', '--roles', 'agent', '--new-key', agentKey, '--wait', ...as('admin:alice')));
    assert.equal(registered['status'], 'admitted');
    await running.follower.waitFor((registered['authorityIndex'] as number) + 1);
    const keys = success(await ledgerAsync('key', 'list', '--principal', 'agent:json-bot', '--home', home.dir, '--json'));
    assert.deepEqual((keys['keys'] as { keyId: string }[]).map((k) => k.keyId), [agentId]);
    failure(await ledgerAsync('key', 'register', '--principal', 'agent:json-bot', '--roles', 'wizard', '--key-id', agentId, ...as('admin:alice')), 'key register with an unknown role', 'BAD_ARGUMENT');
    const approverKey = join(dir, 'json-approver.key');
    await ledgerAsync('keygen', '--principal', 'approver:json', '--out', approverKey);
    const partly = join(dir, 'register-approver.json');
    assert.equal(success(await ledgerAsync('key', 'register', '--principal', 'approver:json', '--roles', 'approver', '--new-key', approverKey, '--out', partly, ...as('admin:alice')), 'key register --out')['statementHash'], undefined);
    success(await ledgerAsync('key', 'cosign', partly, ...as('admin:bob')));
    const submitted = success(await ledgerAsync('key', 'submit', partly, '--wait', ...at));
    assert.equal(submitted['status'], 'admitted');
    assert.equal(success(await ledgerAsync('key', 'revoke', agentId, '--reason', 'done', '--wait', ...as('admin:bob')))['status'], 'admitted');

    // Claude Code set up against this ledger.
    const project = join(dir, 'project');
    mkdirSync(project);
    success(await ledgerAsync('setup', 'claude-code', '--project', project, '--agent', 'agent:json-claude', ...as('admin:alice')));

    // approve: the queue, and a batch with nothing to answer; a bad id is a refusal.
    assert.ok(Array.isArray(success(await ledgerAsync('approve', '--list', '--as', 'approver:dana', ...at))['pending']));
    assert.deepEqual(success(await ledgerAsync('approve', '--batch', '--max-tier', '2', '--as', 'approver:dana', ...at), 'approve --batch')['answered'], []);
    failure(await ledgerAsync('approve', '--approve', 'ffffffffffff', '--as', 'approver:dana', ...at), 'approve of an unknown id', 'SCHEMA_INVALID');
    failure(await ledgerAsync('approve', '--batch', '--max-tier', '3', ...at), 'approve --batch of tier 3', 'POLICY_VIOLATION');

    // drive: its summary as the one object on stdout, progress on stderr.
    const drive = await ledgerAsync('drive', '--proposals', '4', '--home', home.dir, '--json');
    const summary = success(drive);
    assert.deepEqual([summary['proposals'], typeof summary['outcomes'], typeof summary['codes']], [4, 'object', 'object']);
    assert.notEqual(drive.stderr, '', 'progress on stderr');

    // dashboard: the one object, then it serves until stopped.
    const dashboard = spawn(process.execPath, [bin, 'dashboard', '--as', 'admin:alice', ...at], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const [first] = (await new Promise<string>((resolve) => {
        let out = '';
        dashboard.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve(out);
        });
      })).split('\n');
      // Its exit status comes only when it is stopped: the first line is the whole report.
      success({ status: 0, stdout: `${first ?? ''}\n`, stderr: '', path: 'dashboard' });
    } finally {
      dashboard.kill('SIGTERM');
    }

    // export: the committed log through the newest checkpoints.
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 3 + 500));
    const exported = success(await ledgerAsync('export', '--out', join(dir, 'bundle.ndjson'), '--home', home.dir, '--json'));
    assert.equal(success(ledger('verify-chain', join(dir, 'bundle.ndjson'), '--trust-root', String(exported['trustRoot']), '--json'), 'verify-chain of the export')['failure'], null);
  } finally {
    await running.stop();
  }
});

/**
 * Commands whose --json success needs the Kafka broker and Postgres server
 * (a local test has neither), and the test that parses it there with the
 * same shape checks (cli-json-shape.ts).
 */
const SUCCESS_ELSEWHERE: ReadonlyMap<string, string> = new Map([
  ['status', 'admin-cli.int.test.ts: status and doctor of a running installation'],
  ['doctor', 'admin-cli.int.test.ts: status and doctor of a running installation'],
  ['move-to-kafka', 'dev-move.int.test.ts'],
]);

test('audit: the --json success and a failure of its own of every command that takes --json were parsed above', () => {
  const withJson = commandTree().filter((n) => n.options.includes('--json')).map((n) => n.path);
  assert.deepEqual(withJson.filter((path) => !succeeded.has(path) && !SUCCESS_ELSEWHERE.has(path)), [], 'commands whose --json success no test parsed');
  assert.deepEqual(withJson.filter((path) => !failed.has(path)), [], 'commands whose own --json failure no test parsed');
  for (const path of SUCCESS_ELSEWHERE.keys()) assert.ok(withJson.includes(path), `${path} takes --json`);
});
