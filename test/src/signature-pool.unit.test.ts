import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthorityState, ReplayWindow, canonicalJson, createStatement, nodeEd25519, partitionOf, signStatement, type Signer } from '@agent-ledger/core';
import { admit, newSigner, SignaturePool, signatureVerdict } from '@agent-ledger/ledger';

// The sequencer checks intake signatures on worker threads; admission with a
// worker's verdict must be exactly admission without one, for honest and
// hostile input alike.

const root = newSigner('root:1');
const agent = newSigner('agent:billing-bot');
const stranger = newSigner('agent:billing-bot');
const trustRoot = { v: 1 as const, origin: 'ledger.test/pool', rootKeys: [root.keyId], threshold: 1 };

function registry(): AuthorityState {
  const state = new AuthorityState(trustRoot);
  const genesis = createStatement('genesis', { origin: trustRoot.origin, eventPartitions: 2, freshnessMs: 300_000, rootKeys: [root.keyId], rootThreshold: 1, keys: [{ keyId: agent.keyId, principal: agent.principal, roles: ['agent'] }, { keyId: newSigner('sequencer:main').keyId, principal: 'sequencer:main', roles: ['sequencer'] }] }, root);
  state.authorize(genesis, [root.keyId], 0);
  state.apply(genesis, 0, Date.now());
  return state;
}

/** A proposal authored by `author` (the registered agent unless said), signed by `signers`. */
function proposal(n: number, signers: readonly Signer[] = [agent], author: Signer = agent): Uint8Array {
  const body = { agentId: author.principal, tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11', args: { amountUsd: n }, query: 'pay', labels: [], channel: 'api' as const, context: {} };
  return Buffer.from(JSON.stringify(signStatement(createStatement('proposal.submitted', body, author), signers, nodeEd25519)));
}

/** Honest records and every way the signature stage can fail. */
function corpus(): Uint8Array[] {
  const raws: Uint8Array[] = [];
  for (let n = 0; n < 12; n++) raws.push(proposal(n));
  const forged = JSON.parse(Buffer.from(proposal(99)).toString()) as { statement: { body: { args: { amountUsd: number } } } };
  forged.statement.body.args.amountUsd = 1_000_000; // signed bytes changed
  raws.push(Buffer.from(JSON.stringify(forged)));
  raws.push(proposal(100, [stranger], stranger)); // valid signature, unregistered key
  raws.push(proposal(102, [stranger])); // the agent's statement, signed by another key
  const twice = JSON.parse(Buffer.from(proposal(101)).toString()) as { signatures: unknown[] };
  twice.signatures.push(twice.signatures[0]);
  raws.push(Buffer.from(JSON.stringify(twice)));
  raws.push(Buffer.from('{"statement": {}, "signatures": []}'));
  raws.push(Buffer.from('{"a":1,"a":2}'));
  raws.push(Buffer.from([0xff, 0xfe, 0x00]));
  return raws;
}

test('admission with worker verdicts equals admission without them, record by record', async () => {
  const raws = corpus();
  const partition = partitionOf(JSON.parse(Buffer.from(raws[0] as Uint8Array).toString()).statement, 2);
  const pool = new SignaturePool(2);
  try {
    const verdicts = await pool.verdicts(raws);
    assert.deepEqual(verdicts, raws.map(signatureVerdict), 'workers and the inline check agree');
    const now = Date.now();
    const inline = raws.map((raw) => admit(raw, partition, 2, registry(), 1, new ReplayWindow(300_000), now));
    const pooled = raws.map((raw, i) => admit(raw, partition, 2, registry(), 1, new ReplayWindow(300_000), now, verdicts[i]));
    assert.deepEqual(pooled, inline);
    const kinds = inline.map((r) => (r.kind === 'admitted' ? 'admitted' : r.code));
    assert.deepEqual(kinds.slice(12), ['INVALID_SIGNATURE', 'KEY_UNKNOWN', 'INVALID_SIGNATURE', 'SCHEMA_INVALID', 'SCHEMA_INVALID', 'SCHEMA_INVALID', 'SCHEMA_INVALID']);
    assert.equal(kinds.filter((k) => k === 'admitted').length, 12);
  } finally {
    await pool.close();
  }
});

test('a verdict only stands in for the signature check: keys, roles and authorship are still judged on the record', async () => {
  const raw = proposal(1, [stranger], stranger);
  const partition = partitionOf(JSON.parse(Buffer.from(raw).toString()).statement, 2);
  const verified = admit(raw, partition, 2, registry(), 1, new ReplayWindow(300_000), Date.now(), { signers: [stranger.keyId] });
  assert.equal(verified.kind === 'rejected' ? verified.code : verified.kind, 'KEY_UNKNOWN');
  // A verdict naming other signers than the record's author cannot make the record the agent's.
  const claimed = admit(raw, partition, 2, registry(), 1, new ReplayWindow(300_000), Date.now(), { signers: [agent.keyId] });
  assert.equal(claimed.kind === 'rejected' ? claimed.code : claimed.kind, 'INVALID_SIGNATURE');
});

test("a verdict bound to a canonical statement (the gate's inline signature) stands only for that statement by those keys", () => {
  const raw = proposal(7);
  const envelope = JSON.parse(Buffer.from(raw).toString()) as { statement: Parameters<typeof canonicalJson>[0]; signatures: { keyId: string; sig: string }[] };
  const partition = partitionOf(envelope.statement as never, 2);
  const canonical = canonicalJson(envelope.statement);
  const codeOf = (r: ReturnType<typeof admit>): string => (r.kind === 'rejected' ? r.code : r.kind);
  const admitWith = (bytes: Uint8Array, verdict: Parameters<typeof admit>[7]): string => codeOf(admit(bytes, partition, 2, registry(), 1, new ReplayWindow(300_000), Date.now(), verdict));
  assert.equal(admitWith(raw, { signers: [agent.keyId], canonical }), 'admitted');
  // The signature bytes broken: a vouch for exactly this statement and key is what stands in for the check...
  const broken = { ...envelope, signatures: [{ keyId: agent.keyId, sig: Buffer.alloc(64, 7).toString('base64') }] };
  const brokenRaw = Buffer.from(JSON.stringify(broken));
  assert.equal(admitWith(brokenRaw, { signers: [agent.keyId], canonical }), 'admitted', 'the vouch replaces the check');
  assert.equal(admitWith(brokenRaw, undefined), 'INVALID_SIGNATURE');
  // ...but a statement that differs from the vouched one, or other keys, are checked as usual.
  const changed = JSON.parse(JSON.stringify(broken)) as typeof broken & { statement: { body: { args: { amountUsd: number } } } };
  changed.statement.body.args.amountUsd = 1_000_000;
  assert.equal(admitWith(Buffer.from(JSON.stringify(changed)), { signers: [agent.keyId], canonical }), 'INVALID_SIGNATURE');
  assert.equal(admitWith(brokenRaw, { signers: [stranger.keyId], canonical }), 'INVALID_SIGNATURE');
  assert.equal(admitWith(brokenRaw, { signers: [agent.keyId, stranger.keyId], canonical }), 'INVALID_SIGNATURE');
});
