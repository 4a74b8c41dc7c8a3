// The seven fixtures of the tool-call authorization packet
// (test/vectors/gate/authorization-packet.json), run through decide() with
// the grants loaded by grantFromScenario, and through the built
// `ledger gate evaluate` command function (services/ledger; build it first:
// `npx tsc -b packages/gate services/ledger`).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decide, grantFromScenario, initialState, type Channel, type DecideContext, type GateDecision, type Proposal, type ScenarioGrant } from '../src/index.js';

interface Fixture {
  readonly name: string;
  readonly source: string;
  readonly now: string;
  readonly channel: Channel;
  readonly context: DecideContext;
  readonly proposal: Proposal;
  readonly grants: readonly ScenarioGrant[];
  readonly expected: { outcome: string; code: string | null; grantId: string | null; rules?: string[] };
}

// Compiled to packages/gate/dist/test/: the repository root is four levels up.
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const vectorPath = join(root, 'test/vectors/gate/authorization-packet.json');
const fixtures = JSON.parse(readFileSync(vectorPath, 'utf8')) as Fixture[];
const commandModule = join(root, 'services/ledger/dist/src/commands/gate-evaluate.js');

type EvaluateCommand = (file: string, write?: (line: string) => void) => Promise<number>;

async function loadCommand(): Promise<EvaluateCommand> {
  assert.ok(existsSync(commandModule), `build services/ledger first: ${commandModule} is missing`);
  return ((await import(commandModule)) as { gateEvaluateCommand: EvaluateCommand }).gateEvaluateCommand;
}

async function run(file: string): Promise<{ exit: number; lines: unknown[] }> {
  const lines: unknown[] = [];
  const exit = await (await loadCommand())(file, (line) => lines.push(JSON.parse(line)));
  return { exit, lines };
}

function check(fixture: Fixture, actual: Pick<GateDecision, 'outcome' | 'code' | 'grantId' | 'reasons'>): void {
  const { outcome, code, grantId, rules } = fixture.expected;
  assert.deepEqual({ outcome: actual.outcome, code: actual.code, grantId: actual.grantId }, { outcome, code, grantId }, fixture.name);
  for (const rule of rules ?? []) assert.ok(actual.reasons.includes(rule), `${fixture.name}: ${rule}`);
}

function tempFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gate-evaluate-')), name);
  writeFileSync(path, content);
  return path;
}

describe('tool-call authorization packet', () => {
  test('seven fixtures, each naming its source', () => {
    assert.equal(fixtures.length, 7);
    for (const f of fixtures) assert.match(f.source, /authorization packet/);
  });

  for (const fixture of fixtures) {
    test(`decide(): ${fixture.name}`, () => {
      const state = initialState();
      fixture.grants.forEach((g, i) => grantFromScenario(state, g, i));
      const d = decide({ now: Date.parse(fixture.now), channel: fixture.channel, context: fixture.context, proposal: fixture.proposal }, state);
      check(fixture, d);
      if (d.code !== null) assert.match(d.refusal ?? '', new RegExp(`^REFUSED: ${d.code}: `));
    });
  }

  test('the command decides the vector file, one line per fixture, in order, exit 0', async () => {
    const { exit, lines } = await run(vectorPath);
    assert.equal(exit, 0);
    assert.equal(lines.length, fixtures.length);
    fixtures.forEach((fixture, i) => {
      const line = lines[i] as GateDecision;
      assert.deepEqual(Object.keys(line), ['outcome', 'tier', 'risk', 'code', 'refusal', 'grantId', 'reasons']);
      check(fixture, line);
    });
  });

  test('the command accepts a single scenario object', async () => {
    const { exit, lines } = await run(tempFile('one.json', JSON.stringify(fixtures[6])));
    assert.equal(exit, 0);
    assert.equal((lines[0] as GateDecision).code, 'GRANT_BLOCKED');
  });

  test('an invalid scenario gives a typed SCHEMA_INVALID line in its place and exit 1; the others are still decided', async () => {
    const bad = { ...fixtures[0], proposal: { ...fixtures[0]?.proposal, agentId: 7 }, extra: true };
    const dup = { ...fixtures[0], grants: [fixtures[0]?.grants[0], fixtures[0]?.grants[0]] };
    const { exit, lines } = await run(tempFile('mixed.json', JSON.stringify([fixtures[0], bad, dup, { ...fixtures[1], channel: 'pager' }])));
    assert.equal(exit, 1);
    assert.equal(lines.length, 4);
    assert.equal((lines[0] as GateDecision).outcome, 'allow');
    for (const i of [1, 2, 3]) {
      const error = (lines[i] as { error: { code: string; scenario: number; issues: { path: string }[] } }).error;
      assert.equal(error.code, 'SCHEMA_INVALID');
      assert.equal(error.scenario, i);
      assert.ok(error.issues.length > 0);
    }
    const paths = (lines[1] as { error: { issues: { path: string }[] } }).error.issues.map((issue) => issue.path);
    assert.ok(paths.includes('proposal.agentId'));
  });

  test('bytes that are not strict JSON (duplicate keys, bad UTF-8, trailing commas) or not scenarios: one SCHEMA_INVALID line, exit 1', async () => {
    for (const content of ['{"now": 1, "now": 2}', '[1,]', '"a string"', '\uFEFF{}']) {
      const { exit, lines } = await run(tempFile('bad.json', content));
      assert.equal(exit, 1, content);
      assert.equal((lines[0] as { error: { code: string } }).error.code, 'SCHEMA_INVALID');
    }
    const path = tempFile('utf8.json', '');
    writeFileSync(path, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
    assert.equal((await run(path)).exit, 1);
  });

  test('an unreadable file: exit 2, nothing on stdout', async () => {
    const { exit, lines } = await run(join(tmpdir(), 'no-such-dir-for-gate', 'missing.json'));
    assert.equal(exit, 2);
    assert.equal(lines.length, 0);
  });
});
