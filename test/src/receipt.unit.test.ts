import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildTrust, checkTrustExtends, parseTrust, verifyReceipt, type Receipt, type ReceiptVerdict, type RegistrationProof, type Trust } from '@agent-ledger/client';
import {
  AuthorityState,
  MerkleTree,
  canonicalJson,
  createStatement,
  fromHex,
  nodeEd25519,
  signStatement,
  toBase64,
  verifyEnvelopeSignatures,
  type BodyOf,
  type Entry,
  type Envelope,
  type Signer,
} from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';

// verifyReceipt() offline, against logs built by hand so that every check
// can be reached on its own: each receipt below is valid except for the one
// thing the test changes.

/** A TestLedger that remembers every entry, so it can cut receipts. */
// The base constructor appends genesis before a subclass's fields exist: entries are kept beside the instance.
const entriesOf = new WeakMap<TestLedger, Map<number, Entry[]>>();

class ReceiptLedger extends TestLedger {
  get entries(): Map<number, Entry[]> {
    let entries = entriesOf.get(this);
    if (entries === undefined) {
      entries = new Map();
      entriesOf.set(this, entries);
    }
    return entries;
  }

  override append(envelope: Envelope, options: { partition?: number; authorityIndex?: number } = {}): Entry {
    const entry = super.append(envelope, options);
    const list = this.entries.get(entry.partition) ?? [];
    list.push(entry);
    this.entries.set(entry.partition, list);
    return entry;
  }

  /** The genesis envelope. */
  get genesis(): Envelope {
    return (this.entries.get(0) as Entry[])[0]?.envelope as Envelope;
  }

  /** The trust document as the API would serve it now: the authority stream folded with the one authority fold. */
  trust(): Trust {
    const state = new AuthorityState(this.trustRoot);
    for (const entry of this.entries.get(0) ?? []) {
      const statement = entry.envelope.statement;
      state.authorize(statement, verifyEnvelopeSignatures(entry.envelope, canonicalJson(statement), nodeEd25519), entry.index);
      state.apply(statement, entry.index, Date.parse(entry.sequencedAt));
    }
    return parseTrust(JSON.parse(JSON.stringify(this.unchecked(state))));
  }

  /** The trust document with registration proofs against a fresh authority checkpoint, before any check. */
  unchecked(state?: AuthorityState): Trust {
    let folded = state;
    if (folded === undefined) {
      folded = new AuthorityState(this.trustRoot);
      for (const entry of this.entries.get(0) ?? []) {
        const statement = entry.envelope.statement;
        folded.authorize(statement, verifyEnvelopeSignatures(entry.envelope, canonicalJson(statement), nodeEd25519), entry.index);
        folded.apply(statement, entry.index, Date.parse(entry.sequencedAt));
      }
    }
    const authority = this.entries.get(0) as Entry[];
    const note = folded.size > 1 ? this.checkpoint(0) : '';
    const proofOf = (at: number): RegistrationProof => {
      const { entry, inclusionProof, checkpoint } = this.receipt(authority[at] as Entry, note);
      return { entry, inclusionProof: [...inclusionProof], checkpoint } as RegistrationProof;
    };
    return buildTrust(this.genesis, folded.keys(), folded.size, proofOf);
  }

  /** A receipt for an entry against the newest checkpoint of its partition (sealing one when none covers it). */
  receipt(entry: Entry, note?: string): Receipt {
    const list = this.entries.get(entry.partition) as Entry[];
    const checkpoint = note ?? this.checkpoint(entry.partition);
    const size = Number(checkpoint.split('\n')[1]);
    const tree = new MerkleTree();
    for (const e of list.slice(0, size)) tree.append(fromHex(e.hash, 32));
    return { v: 1, entry, inclusionProof: tree.inclusionProof(entry.index, size).map(toBase64), checkpoint, genesis: this.genesis };
  }

  /** A proposal and its decision by `signer` (the gate unless told). */
  decided(signer: Signer = this.gate, body: Partial<BodyOf<'decision.recorded'>> = {}, options: { partition?: number } = {}): { proposal: string; decision: Entry } {
    const proposal = this.propose({ context: { nonce: Math.random() } }).hash;
    const { entry } = this.say('decision.recorded', { agentId: this.agent.principal, proposal, outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: this.authoritySize, grantId: null, grantEntry: null, ...body }, signer, options);
    return { proposal, decision: entry };
  }
}

function refusal(verdict: ReceiptVerdict): string {
  return verdict.ok ? 'ok' : verdict.code;
}

function at(entry: Entry, offsetMs = 0): number {
  return Date.parse(entry.sequencedAt) + offsetMs;
}

describe('verifyReceipt', () => {
  test('a genuine decision receipt verifies, with what it proves', () => {
    const ledger = new ReceiptLedger();
    const { proposal, decision } = ledger.decided();
    const verdict = verifyReceipt(ledger.receipt(decision), ledger.trust(), { proposalHash: proposal, agentId: ledger.agent.principal, now: at(decision, 1000) });
    assert.ok(verdict.ok, JSON.stringify(verdict));
    assert.equal(verdict.decision.outcome, 'allow');
    assert.equal(verdict.decision.signer, ledger.gate.keyId);
    assert.equal(verdict.decision.index, decision.index);
    assert.equal(verdict.decision.checkpointSize, decision.index + 1);
  });

  test('a decision signed by a registered key without the gate role, in a log whose checkpoint covers it: KEY_ROLE', () => {
    const ledger = new ReceiptLedger();
    const { proposal, decision } = ledger.decided(ledger.approver);
    assert.equal(refusal(verifyReceipt(ledger.receipt(decision), ledger.trust(), { proposalHash: proposal, now: at(decision) })), 'KEY_ROLE');
  });

  test('a decision signed by a gate key revoked before its authority index: KEY_REVOKED', () => {
    const ledger = new ReceiptLedger();
    ledger.say('key.revoked', { keyId: ledger.gate.keyId, reason: 'rotated' }, ledger.admin);
    const { proposal, decision } = ledger.decided();
    assert.equal(refusal(verifyReceipt(ledger.receipt(decision), ledger.trust(), { proposalHash: proposal, now: at(decision) })), 'KEY_REVOKED');
  });

  test('the same gate key, revoked only after the decision: still valid for it', () => {
    const ledger = new ReceiptLedger();
    const { proposal, decision } = ledger.decided();
    ledger.say('key.revoked', { keyId: ledger.gate.keyId, reason: 'rotated' }, ledger.admin);
    assert.equal(refusal(verifyReceipt(ledger.receipt(decision), ledger.trust(), { proposalHash: proposal, now: at(decision) })), 'ok');
  });

  test('a gate key registered after the pinned trust: KEY_UNKNOWN, asking for a refresh; the refreshed trust extends the pinned one and accepts it', () => {
    const ledger = new ReceiptLedger();
    const pinned = ledger.trust();
    const gate2 = newSigner('service:gate-2');
    ledger.say('key.registered', { keyId: gate2.keyId, principal: gate2.principal, roles: ['service'] }, ledger.admin);
    const { proposal, decision } = ledger.decided(gate2);
    const stale = verifyReceipt(ledger.receipt(decision), pinned, { proposalHash: proposal, now: at(decision) });
    assert.equal(refusal(stale), 'KEY_UNKNOWN');
    assert.match(stale.ok ? '' : stale.detail, /refresh/);
    const fresh = ledger.trust();
    checkTrustExtends(pinned, fresh);
    assert.equal(refusal(verifyReceipt(ledger.receipt(decision), fresh, { proposalHash: proposal, now: at(decision) })), 'ok');
  });

  test('a decision moved to another partition than its agent\'s: INTEGRITY_FAILURE', () => {
    const ledger = new ReceiptLedger();
    const proposal = ledger.propose().hash;
    const home = ledger.entries.get(1)?.some((e) => e.envelope.statement.type === 'proposal.submitted') === true ? 1 : 2;
    const other = home === 1 ? 2 : 1;
    const { decision } = ledger.decided(ledger.gate, { proposal }, { partition: other });
    assert.equal(refusal(verifyReceipt(ledger.receipt(decision), ledger.trust(), { proposalHash: proposal, now: at(decision) })), 'INTEGRITY_FAILURE');
  });

  test('another proposal, another agent: INTEGRITY_FAILURE', () => {
    const ledger = new ReceiptLedger();
    const { proposal, decision } = ledger.decided();
    const trust = ledger.trust();
    const receipt = ledger.receipt(decision);
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: 'ab'.repeat(32), now: at(decision) })), 'INTEGRITY_FAILURE');
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: proposal, agentId: 'agent:someone-else', now: at(decision) })), 'INTEGRITY_FAILURE');
  });

  test('a checkpoint of another partition, one that does not cover the entry, and one by a revoked sequencer: CHECKPOINT_INVALID', () => {
    const ledger = new ReceiptLedger();
    const { proposal, decision } = ledger.decided();
    const trust = ledger.trust();
    const otherPartition = ledger.checkpoint(0);
    assert.equal(refusal(verifyReceipt({ ...ledger.receipt(decision), checkpoint: otherPartition }, trust, { proposalHash: proposal, now: at(decision) })), 'CHECKPOINT_INVALID');
    const early = ledger.checkpoint(decision.partition);
    const later = ledger.decided();
    assert.equal(refusal(verifyReceipt({ ...ledger.receipt(later.decision), checkpoint: early }, trust, { proposalHash: later.proposal, now: at(later.decision) })), 'CHECKPOINT_INVALID');

    const revoked = new ReceiptLedger();
    revoked.say('key.revoked', { keyId: revoked.sequencer.keyId, reason: 'compromised' }, revoked.admin);
    const after = revoked.decided();
    assert.equal(refusal(verifyReceipt(revoked.receipt(after.decision), revoked.trust(), { proposalHash: after.proposal, now: at(after.decision) })), 'CHECKPOINT_INVALID');
  });

  test('a receipt of another log (its own genesis and keys): INTEGRITY_FAILURE', () => {
    const mine = new ReceiptLedger();
    const theirs = new ReceiptLedger();
    const { proposal, decision } = theirs.decided();
    assert.equal(refusal(verifyReceipt(theirs.receipt(decision), mine.trust(), { proposalHash: proposal, now: at(decision) })), 'INTEGRITY_FAILURE');
    // Their entry with our genesis: their gate key is none of ours.
    assert.equal(refusal(verifyReceipt({ ...theirs.receipt(decision), genesis: mine.genesis }, mine.trust(), { proposalHash: proposal, now: at(decision) })), 'KEY_UNKNOWN');
  });

  test('stale, and from the future: REPLAY', () => {
    const ledger = new ReceiptLedger({ freshnessMs: 60_000 });
    const { proposal, decision } = ledger.decided();
    const receipt = ledger.receipt(decision);
    const trust = ledger.trust();
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: proposal, now: at(decision, 60_000) })), 'ok');
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: proposal, now: at(decision, 60_001) })), 'REPLAY');
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: proposal, now: at(decision, 5_001), maxAgeMs: 5_000 })), 'REPLAY');
    assert.equal(refusal(verifyReceipt(receipt, trust, { proposalHash: proposal, now: at(decision, -60_001) })), 'REPLAY');
  });

  test('a changed outcome, a changed position, a truncated or padded proof', () => {
    const ledger = new ReceiptLedger();
    ledger.decided();
    const { proposal, decision } = ledger.decided();
    const receipt = ledger.receipt(decision);
    const trust = ledger.trust();
    const now = at(decision);
    const body = decision.envelope.statement.body as BodyOf<'decision.recorded'>;
    const flipped = { ...decision, envelope: { ...decision.envelope, statement: { ...decision.envelope.statement, body: { ...body, outcome: 'block' } } } };
    assert.equal(refusal(verifyReceipt({ ...receipt, entry: flipped }, trust, { proposalHash: proposal, now })), 'INVALID_SIGNATURE');
    assert.equal(refusal(verifyReceipt({ ...receipt, entry: { ...decision, index: decision.index - 1 } }, trust, { proposalHash: proposal, now })), 'INTEGRITY_FAILURE');
    assert.ok(receipt.inclusionProof.length > 0);
    assert.equal(refusal(verifyReceipt({ ...receipt, inclusionProof: receipt.inclusionProof.slice(1) }, trust, { proposalHash: proposal, now })), 'INTEGRITY_FAILURE');
    assert.equal(refusal(verifyReceipt({ ...receipt, inclusionProof: [...receipt.inclusionProof, receipt.inclusionProof[0] as string] }, trust, { proposalHash: proposal, now })), 'INTEGRITY_FAILURE');
  });

  test('not a decision, and not a receipt', () => {
    const ledger = new ReceiptLedger();
    const { entry, hash } = ledger.propose();
    const trust = ledger.trust();
    assert.equal(refusal(verifyReceipt(ledger.receipt(entry), trust, { proposalHash: hash, now: at(entry) })), 'INTEGRITY_FAILURE');
    for (const bad of [null, 42, 'receipt', {}, { v: 2 }, [], { v: 1, entry: {}, inclusionProof: [], checkpoint: '', genesis: {} }]) {
      assert.equal(refusal(verifyReceipt(bad, trust, { proposalHash: hash })), 'SCHEMA_INVALID');
    }
  });

  test('property: a receipt changed anywhere either fails or proves the very same decision', () => {
    const ledger = new ReceiptLedger();
    for (let i = 0; i < 5; i++) ledger.decided();
    const { proposal, decision } = ledger.decided();
    const text = JSON.stringify(ledger.receipt(decision));
    const trust = ledger.trust();
    const now = at(decision);
    const original = verifyReceipt(JSON.parse(text), trust, { proposalHash: proposal, now });
    assert.ok(original.ok);
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), fc.integer({ min: 32, max: 126 }), (position, code) => {
        const changed = text.slice(0, position) + String.fromCharCode(code) + text.slice(position + 1);
        let value: unknown;
        try {
          value = JSON.parse(changed);
        } catch {
          return true;
        }
        const verdict = verifyReceipt(value, trust, { proposalHash: proposal, now });
        return !verdict.ok || canonicalJson(verdict.decision) === canonicalJson(original.decision);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('parseTrust and checkTrustExtends', () => {
  const ledger = new ReceiptLedger();
  const trust = ledger.trust();
  const code = (fn: () => unknown): string => {
    try {
      fn();
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code ?? String(err);
    }
  };
  const copy = (): Trust => JSON.parse(JSON.stringify(trust)) as Trust;

  test('a genesis with fewer root signatures than the threshold, or signed by a stranger', () => {
    const one = copy();
    (one.genesis as unknown as { signatures: unknown[] }).signatures = one.genesis.signatures.slice(0, 1);
    assert.equal(code(() => parseTrust(one)), 'INTEGRITY_FAILURE');
    const stranger = newSigner('root:9');
    const restated = signStatement(createStatement('genesis', trust.genesis.statement.body, stranger), [stranger], nodeEd25519);
    assert.equal(code(() => parseTrust({ ...copy(), genesis: restated })), 'KEY_UNKNOWN');
  });

  test('a trust root that is not the genesis\'s, a listed key the genesis did not register, a role added, a key left out', () => {
    assert.equal(code(() => parseTrust({ ...copy(), trustRoot: { ...trust.trustRoot, threshold: 1 } })), 'INTEGRITY_FAILURE');
    const extra = copy();
    (extra.keys as unknown[]).push({ keyId: newSigner('service:evil').keyId, principal: 'service:evil', roles: ['service'], registeredAt: 0, revokedAt: null, registration: null });
    assert.equal(code(() => parseTrust(extra)), 'INTEGRITY_FAILURE');
    const widened = copy();
    (widened.keys as unknown as { roles: string[] }[])[0]?.roles.push('gate');
    assert.equal(code(() => parseTrust(widened)), 'INTEGRITY_FAILURE');
    assert.equal(code(() => parseTrust({ ...copy(), keys: trust.keys.slice(1) })), 'INTEGRITY_FAILURE');
  });

  test('validity ranges outside the document, duplicates, unknown fields', () => {
    const late = copy();
    (late.keys as unknown as { revokedAt: number | null }[])[0]!.revokedAt = trust.authoritySize;
    assert.equal(code(() => parseTrust(late)), 'INTEGRITY_FAILURE');
    assert.equal(code(() => parseTrust({ ...copy(), keys: [...trust.keys, trust.keys[0]] })), 'INTEGRITY_FAILURE');
    assert.equal(code(() => parseTrust({ ...copy(), extra: 1 })), 'SCHEMA_INVALID');
  });

  test('a key registered after genesis counts only with the proof that the log holds its registration', () => {
    const later = new ReceiptLedger();
    const gate2 = newSigner('service:gate-2');
    later.say('key.registered', { keyId: gate2.keyId, principal: gate2.principal, roles: ['service'] }, later.admin);
    later.say('key.revoked', { keyId: later.approver.keyId, reason: 'left' }, later.admin);
    const proven = JSON.parse(JSON.stringify(later.unchecked())) as Trust;
    assert.equal(code(() => parseTrust(proven)), 'ok');
    const registered = (doc: Trust): { registration: unknown; roles: string[]; keyId: string } => doc.keys.find((k) => k.keyId === gate2.keyId) as unknown as { registration: unknown; roles: string[]; keyId: string };

    // An API inventing a key: no proof.
    const bare = JSON.parse(JSON.stringify(proven)) as Trust;
    registered(bare).registration = null;
    assert.equal(code(() => parseTrust(bare)), 'INTEGRITY_FAILURE');
    // The proof of another entry (the revocation) standing in for the registration.
    const other = JSON.parse(JSON.stringify(proven)) as Trust;
    (registered(other) as { registration: { entry: Entry } }).registration.entry = (later.entries.get(0) as Entry[])[2] as Entry;
    assert.equal(code(() => parseTrust(other)), 'INTEGRITY_FAILURE');
    // The registration widened to the sequencer role.
    const widened = JSON.parse(JSON.stringify(proven)) as Trust;
    registered(widened).roles.push('sequencer');
    assert.equal(code(() => parseTrust(widened)), 'INTEGRITY_FAILURE');
    // A registration entry made up and checkpointed by a sequencer of no pinned log.
    const forged = new ReceiptLedger();
    forged.say('key.registered', { keyId: gate2.keyId, principal: gate2.principal, roles: ['service'] }, forged.admin);
    const theirs = JSON.parse(JSON.stringify(forged.unchecked())) as Trust;
    const swapped = JSON.parse(JSON.stringify(proven)) as Trust;
    registered(swapped).registration = registered(theirs).registration;
    assert.equal(code(() => parseTrust(swapped)), 'CHECKPOINT_INVALID');
    // A truncated inclusion proof.
    const cut = JSON.parse(JSON.stringify(proven)) as Trust;
    const proof = registered(cut).registration as { inclusionProof: string[] };
    assert.ok(proof.inclusionProof.length > 0);
    proof.inclusionProof.pop();
    assert.equal(code(() => parseTrust(cut)), 'INTEGRITY_FAILURE');
  });

  test('a refresh may add keys and revocations after the pinned size, nothing else', () => {
    const later = new ReceiptLedger();
    const pinned = later.trust();
    later.say('key.registered', { keyId: newSigner('service:gate-2').keyId, principal: 'service:gate-2', roles: ['service'] }, later.admin);
    later.say('key.revoked', { keyId: later.gate.keyId, reason: 'rotated' }, later.admin);
    const next = later.trust();
    assert.equal(code(() => checkTrustExtends(pinned, next)), 'ok');
    assert.equal(code(() => checkTrustExtends(next, pinned)), 'INCONSISTENT_HISTORY');
    assert.equal(code(() => checkTrustExtends(pinned, new ReceiptLedger().trust())), 'INCONSISTENT_HISTORY');
    const rewritten = JSON.parse(JSON.stringify(next)) as Trust;
    (rewritten.keys.find((k) => k.keyId === later.gate.keyId) as { revokedAt: number | null }).revokedAt = 0;
    assert.equal(code(() => checkTrustExtends(pinned, { ...rewritten, keys: rewritten.keys.filter((k) => k.keyId !== later.sequencer.keyId) })), 'INCONSISTENT_HISTORY');
  });
});
