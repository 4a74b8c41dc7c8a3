import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';

/**
 * Every command that prints takes --json and then prints exactly one JSON
 * object on stdout, on success and on failure alike: a usage error, an
 * unreadable file, the API or the broker away. The failure object is the one
 * the admin commands always printed: {"ok":false,"error":{code,message,retryable}}.
 * Runs the built CLI as operators and scripts do; nothing but files and
 * closed ports.
 */

const bin = join(repoRoot, 'services', 'ledger', 'bin', 'ledger.js');
/** Nothing listens on port 1: the API, the broker and Postgres of these installations are away. */
const env = { ...process.env, LEDGER_KAFKA_BROKERS: '127.0.0.1:1', LEDGER_HOME: join(tmpdir(), 'ledger-cli-json-no-home') };

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function ledger(...args: string[]): Run {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env, timeout: 60_000 });
}

/** The one JSON object a --json run printed (one line, or one pretty-printed object). */
function oneObject(run: Run, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(run.stdout);
  } catch (err) {
    assert.fail(`${what}: stdout is not one JSON value (${(err as Error).message}): ${JSON.stringify(run.stdout)} stderr ${run.stderr}`);
  }
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what}: not an object: ${run.stdout}`);
  return value as Record<string, unknown>;
}

/** A failure object with its code, and the exit status that goes with it. */
function assertFailure(run: Run, what: string, code: string, status = 2): void {
  const object = oneObject(run, what);
  assert.equal(object['ok'], false, what);
  const error = object['error'] as { code?: unknown; message?: unknown; retryable?: unknown };
  assert.equal(error.code, code, `${what}: ${run.stdout}`);
  assert.equal(typeof error.message, 'string', what);
  assert.equal(typeof error.retryable, 'boolean', what);
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'retryable'], what);
  assert.equal(run.status, status, `${what}: exit ${String(run.status)}`);
}

function assertSuccess(run: Run, what: string): Record<string, unknown> {
  assert.equal(run.status, 0, `${what}: exit ${String(run.status)}: ${run.stderr}`);
  const object = oneObject(run, what);
  assert.equal(object['ok'], true, `${what}: ${run.stdout}`);
  return object;
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

/** Every command of the tree, by its path: what `ledger completion bash` lists, which is the commander tree itself. */
function commandTree(): { path: string; options: string[]; subcommands: string[] }[] {
  const script = ledger('completion', 'bash');
  assert.equal(script.status, 0, script.stderr);
  const nodes: { path: string; options: string[]; subcommands: string[] }[] = [];
  const block = /^ {4}'([^']*)'\)\n {6}_ledger_completion_subs='([^']*)'\n {6}_ledger_completion_opts='([^']*)'/gm;
  for (const m of script.stdout.matchAll(block)) nodes.push({ path: m[1] as string, subcommands: (m[2] as string).split(' ').filter(Boolean), options: (m[3] as string).split(' ').filter(Boolean) });
  return nodes;
}

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
  for (const node of withJson) {
    const run = ledger(...node.path.split(' '), '--json', '--no-such-option');
    assertFailure(run, `${node.path} --no-such-option`, 'BAD_ARGUMENT');
    assert.equal(run.stderr, '', `${node.path}: ${run.stderr}`);
  }
  // An unknown command, and a missing required option.
  assertFailure(ledger('no-such-command', '--json'), 'no-such-command', 'BAD_ARGUMENT');
  assertFailure(ledger('receipt', '--json'), 'receipt without options', 'BAD_ARGUMENT');
  // Without --json, usage errors stay the typed line on stderr.
  const human = ledger('receipt');
  assert.equal(human.stdout, '');
  assert.match(human.stderr, /^ledger: BAD_ARGUMENT: /);
});

test('offline commands: success objects, and failure objects for bad input', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-json-'));
  const key = (name: string): string => join(dir, `${name}.key`);

  const keygen = assertSuccess(ledger('keygen', '--principal', 'admin:alice', '--out', key('alice'), '--json'), 'keygen');
  assert.match(String(keygen['keyId']), /^[0-9a-f]{64}$/);
  assertFailure(ledger('keygen', '--principal', 'admin:alice', '--out', key('alice'), '--json'), 'keygen over an existing file', 'BAD_ARGUMENT');
  for (const [name, principal] of [['root', 'root:one'], ['seq', 'sequencer:one']] as const) assertSuccess(ledger('keygen', '--principal', principal, '--out', key(name), '--json'), `keygen ${name}`);

  const genesis = assertSuccess(
    ledger('genesis', '--origin', 'ledger.test/json', '--root-key', key('root'), '--threshold', '1', '--key', `${key('alice')}=admin`, '--key', `${key('seq')}=sequencer`, '--out', join(dir, 'genesis.json'), '--trust-root-out', join(dir, 'tr.json'), '--json'),
    'genesis',
  );
  assert.equal(genesis['origin'], 'ledger.test/json');
  assertFailure(ledger('genesis', '--origin', 'o', '--root-key', join(dir, 'missing.key'), '--threshold', '1', '--key', `${key('alice')}=admin`, '--out', join(dir, 'g2.json'), '--trust-root-out', join(dir, 'tr2.json'), '--json'), 'genesis with a missing key file', 'NOT_FOUND');

  const rotated = assertSuccess(ledger('rotate-root', '--root-key', key('root'), '--new-root-key', key('alice'), '--threshold', '1', '--reason', 'test', '--out', join(dir, 'rotation.json'), '--json'), 'rotate-root');
  assert.deepEqual([rotated['submitted'], rotated['statementHash']], [false, null]);

  const bundle = join(dir, 'demo.ndjson');
  const trustRoot = join(dir, 'demo-trust-root.json');
  const demo = assertSuccess(ledger('demo', '--events', '60', '--out', bundle, '--trust-root-out', trustRoot, '--checkpoint-every', '10', '--json'), 'demo');
  assert.equal(demo['entries'], 60);
  assertFailure(ledger('demo', '--events', '3', '--out', bundle, '--trust-root-out', trustRoot, '--json'), 'demo with too few events', 'BAD_ARGUMENT');

  const verified = oneObject(ledger('verify-chain', bundle, '--trust-root', trustRoot, '--json'), 'verify-chain');
  assert.equal(verified['ok'], true);
  assertFailure(ledger('verify-chain', join(dir, 'missing.ndjson'), '--trust-root', trustRoot, '--json'), 'verify-chain of a missing bundle', 'NOT_FOUND');

  const receiptFile = join(dir, 'receipt.json');
  const receipt = assertSuccess(ledger('receipt', '--bundle', bundle, '--partition', '1', '--index', '0', '--out', receiptFile, '--json'), 'receipt');
  assert.equal(receipt['out'], receiptFile);
  assertFailure(ledger('receipt', '--bundle', bundle, '--partition', '1', '--index', '99999', '--out', receiptFile, '--json'), 'receipt of an entry not in the bundle', 'BAD_ARGUMENT');
  assert.equal(oneObject(ledger('verify-receipt', receiptFile, '--trust-root', trustRoot, '--json'), 'verify-receipt')['ok'], true);
  assertFailure(ledger('verify-receipt', receiptFile, '--json'), 'verify-receipt without a trust root', 'BAD_ARGUMENT');

  const schemasDir = join(dir, 'schemas');
  const schemas = assertSuccess(ledger('schemas', '--out', schemasDir, '--json'), 'schemas');
  assert.equal(schemas['checked'], false);
  assert.equal(assertSuccess(ledger('schemas', '--out', schemasDir, '--check', '--json'), 'schemas --check')['checked'], true);

  const scenarios = join(repoRoot, 'test', 'vectors', 'gate', 'authorization-packet.json');
  const evaluated = assertSuccess(ledger('gate', 'evaluate', '--scenario', scenarios, '--json'), 'gate evaluate');
  assert.ok(Array.isArray(evaluated['results']) && evaluated['results'].length > 1);
  assertFailure(ledger('gate', 'evaluate', '--scenario', join(dir, 'missing.json'), '--json'), 'gate evaluate of a missing file', 'NOT_FOUND');
  assertFailure(ledger('gate', 'bench', '--rules-version', '999', '--json'), 'gate bench with an unknown rules version', 'BAD_ARGUMENT');

  assertFailure(ledger('trust-root', '--trust', join(dir, 'missing-trust.json'), '--json'), 'trust-root without a pinned trust', 'NOT_FOUND');
  assertFailure(ledger('completion', 'tcsh', '--json'), 'completion takes no --json', 'BAD_ARGUMENT');
});

test('with the API and the broker away: the failure object, UNAVAILABLE and retryable, exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-json-away-'));
  const home = join(dir, 'home');
  const init = assertSuccess(ledger('init', '--home', home, '--json'), 'init');
  assert.equal(init['home'], home);
  // The same installation, its API on a closed port.
  initHome(join(dir, 'away'), { origin: 'ledger.test/away', topicPrefix: 'tjsonaway', pgUrl: 'postgres://postgres@127.0.0.1:1/none', apiPort: 1 });
  const away = join(dir, 'away');
  const api = 'http://127.0.0.1:1';
  const unavailable = (what: string, ...args: string[]): void => {
    const run = ledger(...args, '--json');
    assertFailure(run, what, 'UNAVAILABLE');
    assert.equal((oneObject(run, what)['error'] as { retryable: boolean }).retryable, true, what);
  };
  unavailable('trust', 'trust', '--api', api, '--home', home);
  unavailable('approve', 'approve', '--home', away);
  unavailable('drive', 'drive', '--home', away, '--proposals', '1');
  unavailable('grants trail', 'grants', 'trail', 'grant-1', '--home', away);
  unavailable('grant list', 'grant', 'list', '--home', away);
  unavailable('grant revoke', 'grant', 'revoke', 'grant-1', '--reason', 'test', '--home', away);
  unavailable('key revoke', 'key', 'revoke', 'ab'.repeat(32), '--reason', 'test', '--home', away);
  assertFailure(ledger('key', 'submit', join(dir, 'missing.json'), '--home', away, '--json'), 'key submit of a missing file', 'NOT_FOUND');
  unavailable('rotate-root --submit', 'rotate-root', '--root-key', join(away, 'keys', 'admin-alice.key'), '--new-root-key', join(away, 'keys', 'admin-alice.key'), '--threshold', '1', '--reason', 'test', '--submit', '--home', away);
  const project = join(dir, 'project');
  mkdirSync(project);
  unavailable('setup claude-code', 'setup', 'claude-code', '--project', project, '--home', away);
  // A Kafka installation is not moved again; an embedded one with no log yet has nothing to export.
  assertFailure(ledger('move-to-kafka', '--home', away, '--json'), 'move-to-kafka of a Kafka installation', 'BAD_ARGUMENT');
  const embedded = join(dir, 'embedded');
  initHome(embedded, { storage: 'embedded', origin: 'ledger.test/embedded' });
  assertFailure(ledger('export', '--home', embedded, '--out', join(dir, 'bundle.ndjson'), '--json'), 'export of a log never started', 'INTEGRITY_FAILURE', 1);
  // No installation at all: the home's own refusal (a LedgerError, so exit 1).
  assertFailure(ledger('status', '--home', join(dir, 'nowhere'), '--json'), 'status without an installation', 'SCHEMA_INVALID', 1);
});
