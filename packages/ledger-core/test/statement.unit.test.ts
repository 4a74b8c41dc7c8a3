import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as core from '../src/index.js';
import {
  EnvelopeSchema,
  PartitionChain,
  StatementSchema,
  Timestamp,
  createStatement,
  entryHash,
  envelopeHash,
  eventPartitionOf,
  generateSeed,
  headerOf,
  keyIdOf,
  nobleEd25519,
  nodeEd25519,
  readLineBatches,
  signStatement,
  signingMessage,
  canonicalJson,
  statementHash,
  uuidv7,
  uuidv7Millis,
  verifyEnvelopeSignatures,
  type Signer,
} from '../src/index.js';

function signer(principal: string): Signer {
  const seed = generateSeed();
  return { principal, keyId: keyIdOf(seed, nodeEd25519), seed };
}

const proposalBody = {
  agentId: 'agent:billing-bot',
  tool: 'payments',
  actionType: 'payment.send',
  targetResource: 'payments/vendors/acme',
  recipient: 'acme-corp',
  scope: 'invoice:2026-11',
  args: { amountUsd: 1200 },
  query: 'pay the invoice',
  labels: [],
  channel: 'api' as const,
  context: {},
};

test('the package index exports exactly the documented names', () => {
  assert.deepEqual(Object.keys(core).sort(), [
    'AUTHORITY_PARTITION', 'AUTHORITY_RULES_VERSIONS', 'AUTHORITY_TYPES', 'AUTHOR_ROLES_V2', 'ArgumentConstraintSchema', 'AuthorityState', 'BODY_SCHEMAS', 'BUNDLE_FORMAT', 'BUNDLE_VERSION', 'BundleCheckpointSchema',
    'BundleEntrySchema', 'BundleHeaderSchema', 'BundleLineSchema', 'BundleTrailerSchema', 'DEFAULT_GRANT_POLICY', 'DEFAULT_JSON_LIMITS', 'DEFAULT_RISK_THRESHOLD', 'EMPTY_ROOT', 'EntrySchema',
    'EnvelopeSchema', 'GrantRegistry', 'Hash', 'KeyId', 'LATEST_AUTHORITY_RULES_VERSION', 'LedgerError', 'MAX_BUNDLE_LINE_BYTES', 'MAX_PLATFORM_ASSURANCE_TIER', 'MerkleAccumulator', 'MerkleTree', 'PartitionChain', 'Principal',
    'REQUIRED_ROLE', 'ROLES', 'ReplayWindow', 'Role', 'STATEMENT_SIGNING_CONTEXT', 'STATEMENT_TYPES', 'SignatureSchema', 'StatementId', 'StatementSchema',
    'Timestamp', 'TrustRootSchema', 'ZERO_HASH', 'bytesEqual', 'canonicalBytes', 'canonicalJson', 'checkCheckpointSigners', 'checkPublicKey', 'checkRouting', 'checkpointKeyNames', 'checkpointVerifiers', 'concatBytes', 'coveringPatterns', 'covers',
    'createStatement', 'entryHash', 'entryHashBytes', 'envelopeCanonical', 'envelopeHash', 'eventPartitionOf', 'formatCheckpoint',
    'formatTrailer', 'fromBase64', 'fromHex', 'generateSeed', 'grantInForce', 'headerOf', 'interiorHash', 'isPattern', 'keyIdOf', 'leafHash', 'matchesPattern', 'narrows', 'nobleEd25519',
    'nodeEd25519', 'noteKeyId', 'openNote', 'parseCheckpoint', 'parseStrictJson', 'parseStrictJsonBytes', 'parseTrailer', 'partitionOf',
    'partitionOrigin', 'readLineBatches', 'rootFromLeafHashes', 'satisfiesAll', 'sequencerNoteSigner', 'sha256', 'sha256Hex', 'signCanonicalStatement', 'signCheckpoint', 'signNote',
    'signStatement', 'signingMessage', 'statementHash', 'toBase64', 'toHex', 'utf8', 'uuidv7', 'uuidv7Millis', 'verifierKeyString',
    'verifyConsistency', 'verifyEnvelopeSignatures', 'verifyInclusion',
  ]);
});

test('a signed statement verifies under both backends and names its own hash', () => {
  const agent = signer('agent:billing-bot');
  const statement = createStatement('proposal.submitted', proposalBody, agent, new Date('2026-11-01T08:00:00.000Z'));
  assert.equal(StatementSchema.safeParse(statement).success, true);
  const envelope = signStatement(statement, [agent], nodeEd25519);
  assert.equal(EnvelopeSchema.safeParse(envelope).success, true);
  assert.deepEqual(signStatement(statement, [agent], nobleEd25519), envelope, 'noble signs byte-identically');
  const canonical = canonicalJson(statement);
  assert.deepEqual(core.signCanonicalStatement(statement, canonical, [agent], nodeEd25519), envelope, 'signing a canonical form held by the caller is the same signature');
  assert.deepEqual(verifyEnvelopeSignatures(envelope, canonical, nodeEd25519), [agent.keyId]);
  assert.deepEqual(verifyEnvelopeSignatures(envelope, canonical, nobleEd25519), [agent.keyId]);
  assert.equal(statementHash(statement), core.sha256Hex(canonical));
  const message = signingMessage(canonical);
  assert.equal(Buffer.from(message.subarray(0, 26)).toString(), 'agent-ledger/statement/v1\n');
  // Any change to the statement breaks the signature.
  const changed = { ...statement, body: { ...statement.body, recipient: 'globex-ltd' } };
  assert.throws(() => verifyEnvelopeSignatures({ ...envelope, statement: changed }, canonicalJson(changed), nodeEd25519), (e: unknown) => (e as core.LedgerError).code === 'INVALID_SIGNATURE');
  // A key that signs twice is refused.
  assert.throws(() => verifyEnvelopeSignatures({ ...envelope, signatures: [...envelope.signatures, ...envelope.signatures] }, canonical, nodeEd25519), (e: unknown) => (e as core.LedgerError).code === 'SCHEMA_INVALID');
});

test('statement schemas are closed and strict', () => {
  const agent = signer('agent:billing-bot');
  const statement = createStatement('proposal.submitted', proposalBody, agent);
  assert.equal(StatementSchema.safeParse({ ...statement, extra: 1 }).success, false);
  assert.equal(StatementSchema.safeParse({ ...statement, body: { ...statement.body, extra: 1 } }).success, false);
  assert.equal(StatementSchema.safeParse({ ...statement, type: 'genesis' }).success, false);
  assert.equal(StatementSchema.safeParse({ ...statement, id: statement.id.toUpperCase() }).success, false);
  assert.equal(StatementSchema.safeParse({ ...statement, author: { ...statement.author, keyId: statement.author.keyId.toUpperCase() } }).success, false);
});

test('timestamps: exactly the real instants in millisecond ISO form', () => {
  fc.assert(
    fc.property(fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
      assert.equal(Timestamp.safeParse(d.toISOString()).success, true);
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.integer({ min: 1970, max: 2400 }), fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 39 }), fc.integer({ min: 0, max: 29 }), (y, mo, d, h) => {
      const text = `${y}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:00:00.000Z`;
      const ms = Date.parse(text);
      const real = Number.isFinite(ms) && new Date(ms).toISOString() === text;
      assert.equal(Timestamp.safeParse(text).success, real, text);
    }),
    { numRuns: 2000 },
  );
  for (const bad of ['2026-11-01T08:00:00Z', '2026-11-01T08:00:00.000+00:00', '2026-11-01 08:00:00.000Z', '2026-02-29T00:00:00.000Z']) {
    assert.equal(Timestamp.safeParse(bad).success, false, bad);
  }
});

test('UUIDv7 ids carry their millisecond time and sort in issue order', () => {
  const ms = Date.parse('2026-11-22T07:00:00.123Z');
  const ids = Array.from({ length: 50 }, () => uuidv7(ms));
  for (const id of ids) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(uuidv7Millis(id), ms);
  }
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

test('entries chain: each commits to the previous hash, its position, time and envelope', () => {
  const agent = signer('agent:billing-bot');
  const chain = new PartitionChain(2);
  const entries = Array.from({ length: 5 }, (_, i) => {
    const statement = createStatement('proposal.submitted', { ...proposalBody, query: `q${i}` }, agent, new Date(1_800_000_000_000 + i));
    return chain.append(signStatement(statement, [agent], nodeEd25519), new Date(1_800_000_000_100 + i), 3);
  });
  assert.equal(entries[0]?.prev, core.ZERO_HASH);
  entries.forEach((entry, i) => {
    assert.equal(entry.index, i);
    if (i > 0) assert.equal(entry.prev, entries[i - 1]?.hash);
    assert.equal(entryHash(headerOf(entry, envelopeHash(entry.envelope))), entry.hash);
  });
  assert.equal(chain.head, entries[4]?.hash);
  assert.deepEqual(chain.root(), core.rootFromLeafHashes(entries.map((e) => core.fromHex(e.hash, 32))));
  // Changing any header field changes the hash.
  const first = entries[0] as core.Entry;
  const envHash = envelopeHash(first.envelope);
  for (const field of ['partition', 'index', 'authorityIndex'] as const) {
    assert.notEqual(entryHash(headerOf({ ...first, [field]: first[field] + 1 }, envHash)), first.hash, field);
  }
  assert.notEqual(entryHash(headerOf({ ...first, sequencedAt: '2030-01-01T00:00:00.000Z' }, envHash)), first.hash);
  // sequencedAt never goes backwards.
  const late = chain.append(first.envelope, new Date(0), 3);
  assert.equal(late.sequencedAt, entries[4]?.sequencedAt);
});

test('routing is stable and spreads agents over the events partitions', () => {
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const p = eventPartitionOf(`agent:a${i}`, 4);
    assert.ok(p >= 1 && p <= 4);
    assert.equal(eventPartitionOf(`agent:a${i}`, 4), p);
    seen.add(p);
  }
  assert.equal(seen.size, 4);
});

test('the line reader splits batches, keeps a last unterminated line, and refuses oversize lines without buffering them', async () => {
  const chunks = ['{"a":1}\n{"b"', ':2}\n', 'x'.repeat(100), 'y'.repeat(100), '\n{"c":3}'];
  const batches = [];
  for await (const batch of readLineBatches(chunks, { batchLines: 2, maxLineBytes: 150 })) batches.push(batch);
  const lines: string[] = [];
  const oversize: number[] = [];
  for (const batch of batches) {
    let start = 0;
    batch.ends.forEach((end, k) => {
      lines.push(Buffer.from(batch.bytes.subarray(start, end)).toString());
      start = end;
      if (batch.oversize.includes(batch.firstLine + k)) oversize.push(batch.firstLine + k);
    });
  }
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '', '{"c":3}']);
  assert.deepEqual(oversize, [3]);
  assert.deepEqual(batches.map((b) => b.firstLine), [1, 3]);
  // SPEC.md section 8: the last line lacks its newline, and the batch says which it is.
  assert.deepEqual(batches.map((b) => b.unterminated), [undefined, 4]);
  const terminated = [];
  for await (const batch of readLineBatches(['{"a":1}\n', '{"b":2}\n'])) terminated.push(batch);
  assert.deepEqual(terminated.map((b) => [b.ends.length, b.unterminated]), [[2, undefined]]);
});
