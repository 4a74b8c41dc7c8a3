import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BODY_SCHEMAS,
  REQUIRED_ROLE,
  StatementSchema,
  canonicalJson,
  createStatement,
  keyIdOf,
  nodeEd25519,
  nobleEd25519,
  signStatement,
  verifyEnvelopeSignatures,
} from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { RulesScreener, screeningStatement, type ScreenResult } from '../src/index.js';
import { CASES, wellFormed } from './support.js';

const serviceSeed = new Uint8Array(32).fill(42);
const service = { principal: 'service:screen', keyId: keyIdOf(serviceSeed, nodeEd25519), seed: serviceSeed };

test('a verdict becomes a screening.verdict statement signed by a service key', async () => {
  assert.equal(REQUIRED_ROLE['screening.verdict'], 'service');
  const input = CASES.remotePipe();
  const result = await new RulesScreener().screen(input);
  const body = screeningStatement(result, input.proposal.agentId, input.proposalHash);
  assert.deepEqual(body, {
    agentId: 'agent:ops',
    proposal: input.proposalHash,
    verdict: 'dangerous',
    rationale: result.rationale,
    model: 'rules/v3',
    promptHash: result.promptHash,
  });
  assert.equal(BODY_SCHEMAS['screening.verdict'].safeParse(body).success, true);

  const statement = createStatement('screening.verdict', body, service);
  const envelope = signStatement(statement, [service], nodeEd25519);
  assert.equal(StatementSchema.safeParse(envelope.statement).success, true);
  const canonical = canonicalJson(envelope.statement);
  assert.deepEqual(verifyEnvelopeSignatures(envelope, canonical, nodeEd25519), [service.keyId]);
  assert.deepEqual(verifyEnvelopeSignatures(envelope, canonical, nobleEd25519), [service.keyId]);
});

test('a signed verdict altered after signing does not verify', async () => {
  const input = CASES.recursiveDelete();
  const result = await new RulesScreener().screen(input);
  const statement = createStatement('screening.verdict', screeningStatement(result, 'agent:ops', input.proposalHash), service);
  const envelope = signStatement(statement, [service], nodeEd25519);
  const forged = { ...envelope, statement: { ...envelope.statement, body: { ...envelope.statement.body, verdict: 'safe' as const } } };
  assert.throws(
    () => verifyEnvelopeSignatures(forged, canonicalJson(forged.statement), nodeEd25519),
    (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.INVALID_SIGNATURE,
  );
});

test('a rationale over the statement limit is clipped to 4096 without splitting a surrogate pair', () => {
  const base = new RulesScreener().screenNow(CASES.routineList());
  const long: ScreenResult = { ...base, rationale: `${'x'.repeat(4092)}😀😀😀😀` };
  const body = screeningStatement(long, 'agent:ops', CASES.routineList().proposalHash);
  assert.ok(body.rationale.length <= 4096);
  assert.ok(wellFormed(body.rationale));
  assert.equal(BODY_SCHEMAS['screening.verdict'].safeParse(body).success, true);
});

test('a malformed agent id or proposal hash is refused with SCHEMA_INVALID', () => {
  const result = new RulesScreener().screenNow(CASES.routineList());
  const good = CASES.routineList().proposalHash;
  for (const [agentId, hash] of [['not a principal', good], ['agent:ops', 'abc'], ['agent:ops', good.toUpperCase()]] as const) {
    assert.throws(() => screeningStatement(result, agentId, hash), (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID);
  }
});
