import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BODY_SCHEMAS } from '@agent-ledger/core';
import { ScreenFailure, Verdict, isLocalScreener, promptHashOf, screeningPolicy, screeningStatement, type ScreenInput, type Screener } from '../src/index.js';
import { CASES } from './support.js';

const VERDICTS = new Set<string>(Object.values(Verdict));
const FAILURES = new Set<string>(Object.values(ScreenFailure));

/** Inputs no screener may throw on or clear. */
function malformedInputs(): Array<[string, ScreenInput]> {
  const good = CASES.routineList();
  return [
    ['tier 5', { ...good, tier: 5 }],
    ['tier 1.5', { ...good, tier: 1.5 }],
    ['tier NaN', { ...good, tier: Number.NaN }],
    ['negative risk', { ...good, risk: -1 }],
    ['proposal hash in upper case', { ...good, proposalHash: good.proposalHash.toUpperCase() }],
    ['rules not strings', { ...good, rules: [1 as unknown as string] }],
    ['rule id with a lone surrogate', { ...good, rules: ['pattern.\ud800'] }],
    ['empty rule id', { ...good, rules: [''] }],
    ['proposal null', { ...good, proposal: null as unknown as ScreenInput['proposal'] }],
    ['input null', null as unknown as ScreenInput],
  ];
}

/**
 * The contract every Screener implementation meets, run against each adapter:
 * it never throws, answers one of the three verdicts, names its model, binds
 * the prompt by its hash, yields a valid statement body, and answers
 * `uncertain` (never `safe`) on input it cannot read.
 */
export function screenerContract(name: string, make: () => Screener): void {
  test(`${name}: results satisfy the Screener contract on every case`, async () => {
    const screener = make();
    for (const [label, build] of Object.entries(CASES)) {
      const input = build();
      const result = await screener.screen(input);
      assert.ok(VERDICTS.has(result.verdict), `${label}: verdict ${result.verdict}`);
      assert.equal(result.model, screener.model, label);
      assert.equal(result.promptHash, promptHashOf(result.prompt), `${label}: promptHash is the hash of the prompt`);
      assert.ok(result.failure === null || FAILURES.has(result.failure), label);
      if (result.failure !== null) assert.equal(result.verdict, Verdict.uncertain, `${label}: a failure is uncertain`);
      const body = screeningStatement(result, input.proposal.agentId, input.proposalHash);
      assert.equal(BODY_SCHEMAS['screening.verdict'].safeParse(body).success, true, label);
      if (input.tier >= 3) assert.notEqual(screeningPolicy(input.tier, result.verdict), 'clear', `${label}: tier ${input.tier} is never cleared`);
    }
  });

  test(`${name}: malformed input is uncertain with failure invalid_input, never a throw`, async () => {
    const screener = make();
    for (const [label, input] of malformedInputs()) {
      const result = await screener.screen(input);
      assert.equal(result.verdict, Verdict.uncertain, label);
      assert.equal(result.failure, ScreenFailure.invalid_input, label);
      assert.equal(result.promptHash, promptHashOf(result.prompt), label);
    }
  });

  test(`${name}: the same input gives the same prompt hash`, async () => {
    const screener = make();
    const input = CASES.recursiveDelete();
    const a = await screener.screen(input);
    const b = await screener.screen({ ...input, rules: [...input.rules] });
    const c = await screener.screen(CASES.routineList());
    assert.equal(a.promptHash, b.promptHash);
    assert.notEqual(a.promptHash, c.promptHash);
  });

  test(`${name}: a screener that declares itself deterministic answers now exactly what screen() resolves to`, async () => {
    const screener = make();
    assert.equal(typeof screener.deterministic, 'boolean');
    if (!isLocalScreener(screener)) {
      assert.equal(screener.deterministic, false, 'deterministic without screenNow');
      return;
    }
    const inputs: [string, ScreenInput][] = [...Object.entries(CASES).map(([label, build]): [string, ScreenInput] => [label, build()]), ...malformedInputs()];
    for (const [label, input] of inputs) {
      const now = screener.screenNow(input);
      assert.deepEqual(now, await screener.screen(input), label);
      // What the gate signs from it is the same bytes either way.
      if (now.failure === null) assert.equal(JSON.stringify(screeningStatement(now, input.proposal.agentId, input.proposalHash)), JSON.stringify(screeningStatement(await screener.screen(input), input.proposal.agentId, input.proposalHash)), label);
    }
  });
}
