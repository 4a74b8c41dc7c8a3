// The checks every rules-version test makes: what a version newly holds,
// holds for a new reason, and leaves allowed, each beside the version before
// it (frozen), on the CLI channel in a development context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, initialState, type GateDecision, type Proposal } from '../src/index.js';
import type { RulesVersion } from '../src/rules-version.js';
import { NOW, proposal } from './support.js';

const state = initialState();

export function call(tool: string, args: Record<string, unknown>): Proposal {
  return proposal({ tool, actionType: 'tool.call', targetResource: 'workspace/repo', args });
}

/** The checks of rules `version` against `previous` (frozen). */
export function versionChecks(version: RulesVersion, previous: RulesVersion) {
  const onCli = (p: Proposal, rulesVersion: RulesVersion = version): GateDecision =>
    decide({ now: NOW, channel: 'cli', context: { environment: 'development' }, proposal: p }, state, { rulesVersion });

  /** Each call is not allowed under `version` with `rule` among its reasons; under `previous` it was allowed. */
  const newlyHeldCalls = (title: string, rule: string, calls: readonly Proposal[]): void => {
    for (const p of calls) {
      test(`${title}: ${JSON.stringify(p.args).slice(0, 140)}`, () => {
        const d = onCli(p);
        assert.notEqual(d.outcome, 'allow', d.reasons.join(' '));
        assert.ok(d.reasons.includes(rule), d.reasons.join(' '));
        assert.equal(onCli(p, previous).outcome, 'allow', `version ${previous} (frozen) decides as it did`);
      });
    }
  };

  /** Each call is not allowed under `version` with `rule` among its reasons (`previous` held it for other reasons, without naming the rule). */
  const heldWith = (title: string, rule: string, calls: readonly Proposal[]): void => {
    for (const p of calls) {
      test(`${title}: ${JSON.stringify(p.args).slice(0, 140)}`, () => {
        const d = onCli(p);
        assert.notEqual(d.outcome, 'allow', d.reasons.join(' '));
        assert.ok(d.reasons.includes(rule), d.reasons.join(' '));
        assert.ok(!onCli(p, previous).reasons.includes(rule), `version ${previous} (frozen) does not name the rule`);
      });
    }
  };

  const allowedCalls = (title: string, calls: readonly Proposal[]): void => {
    test(title, () => {
      for (const p of calls) {
        const d = onCli(p);
        assert.equal(d.outcome, 'allow', `${JSON.stringify(p.args)}: ${d.reasons.join(' ')}`);
      }
    });
  };

  const bash = (command: string): Proposal => call('Bash', { command });

  /** Asserts `tool` with `args` is held under `version` with `rule` among its reasons and `previous` (frozen) does not name the rule; with `newly`, that `previous` allowed it. */
  const assertHeld = (tool: string, args: Record<string, unknown>, rule: string, newly: boolean): void => {
    const d = onCli(call(tool, args));
    assert.notEqual(d.outcome, 'allow', `${tool} ${JSON.stringify(args)}`);
    assert.ok(d.reasons.includes(rule), `${JSON.stringify(args)}: ${d.reasons.join(' ')}`);
    const before = onCli(call(tool, args), previous);
    assert.ok(!before.reasons.includes(rule), `${JSON.stringify(args)}: version ${previous} (frozen) does not name ${rule}`);
    if (newly) assert.equal(before.outcome, 'allow', `${JSON.stringify(args)} (version ${previous} frozen allowed it)`);
  };
  /** Asserts `tool` with `args` is allowed under `version`. */
  const assertAllowed = (tool: string, args: Record<string, unknown>): void => {
    const d = onCli(call(tool, args));
    assert.equal(d.outcome, 'allow', `${tool} ${JSON.stringify(args)}: ${d.reasons.join(' ')}`);
  };
  return {
    onCli,
    assertHeld,
    assertAllowed,
    newlyHeldCalls,
    heldWith,
    allowedCalls,
    newlyHeld: (title: string, rule: string, commands: readonly string[]): void => newlyHeldCalls(title, rule, commands.map(bash)),
    allowed: (title: string, commands: readonly string[]): void => allowedCalls(title, commands.map(bash)),
  };
}
