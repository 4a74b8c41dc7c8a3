import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MerkleAccumulator, PartitionChain, createStatement, fromHex, generateSeed, keyIdOf, nodeEd25519, signStatement, type Entry, type Signer } from '../src/index.js';

const seed = generateSeed();
const agent: Signer = { principal: 'agent:resume-bot', keyId: keyIdOf(seed, nodeEd25519), seed };
const body = { agentId: 'agent:resume-bot', tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: {}, query: 'q', labels: [], channel: 'api' as const, context: {} };

test('a chain resumed from its head at any size goes on exactly as the chain that never stopped', () => {
  const full = new PartitionChain(1);
  const entries: Entry[] = [];
  const heads = [full.snapshot()];
  for (let i = 0; i < 70; i++) {
    const statement = createStatement('proposal.submitted', { ...body, query: `q${i}` }, agent, new Date(1_800_000_000_000 + i));
    entries.push(full.append(signStatement(statement, [agent], nodeEd25519), new Date(1_800_000_000_100 + i), 0));
    heads.push(full.snapshot());
  }
  for (const head of heads) {
    const resumed = PartitionChain.resume(1, JSON.parse(JSON.stringify(head)) as typeof head);
    for (const entry of entries.slice(head.size)) resumed.replay(entry);
    assert.equal(resumed.size, full.size, `from ${head.size}`);
    assert.equal(resumed.head, full.head, `from ${head.size}`);
    assert.deepEqual(resumed.root(), full.root(), `from ${head.size}`);
    // Appending after the resume links to the same head, at the same index.
    const statement = createStatement('proposal.submitted', { ...body, query: 'next' }, agent, new Date(1_800_000_001_000));
    const envelope = signStatement(statement, [agent], nodeEd25519);
    const replayed = PartitionChain.resume(1, head);
    for (const entry of entries.slice(head.size)) replayed.replay(entry);
    const reference = PartitionChain.resume(1, heads.at(-1) ?? head);
    assert.deepEqual(replayed.append(envelope, new Date(1_800_000_002_000), 0), reference.append(envelope, new Date(1_800_000_002_000), 0));
  }
});

test('a frontier that does not fit its size is refused', () => {
  const acc = new MerkleAccumulator();
  for (let i = 0; i < 5; i++) acc.append(fromHex('11'.repeat(32), 32));
  assert.equal(acc.frontier().length, 2);
  assert.throws(() => MerkleAccumulator.resume(5, acc.frontier().slice(0, 1)), (err: { code?: string }) => err.code === 'SCHEMA_INVALID');
  assert.throws(() => MerkleAccumulator.resume(6, [...acc.frontier(), fromHex('22'.repeat(32), 32)]), (err: { code?: string }) => err.code === 'SCHEMA_INVALID');
  assert.deepEqual(MerkleAccumulator.resume(5, acc.frontier()).root(), acc.root());
});

test('a read that does not continue the chain is refused and leaves the chain as it was: a gap, a repeated index, a stray record, another partition', () => {
  const full = new PartitionChain(1);
  const entries: Entry[] = [];
  for (let i = 0; i < 6; i++) {
    const statement = createStatement('proposal.submitted', { ...body, query: `q${i}` }, agent, new Date(1_800_000_000_000 + i));
    entries.push(full.append(signStatement(statement, [agent], nodeEd25519), new Date(1_800_000_000_100 + i), 0));
  }
  // An entry of a transaction that was aborted: index 3 again, chained to entry 2, another statement.
  const aborted = PartitionChain.resume(1, (() => {
    const c = new PartitionChain(1);
    for (const e of entries.slice(0, 3)) c.replay(e);
    return c.snapshot();
  })());
  const statement = createStatement('proposal.submitted', { ...body, query: 'aborted' }, agent, new Date(1_800_000_000_050));
  const stray = aborted.append(signStatement(statement, [agent], nodeEd25519), new Date(1_800_000_000_150), 0);
  const other = new PartitionChain(2);
  const foreign = other.append(signStatement(statement, [agent], nodeEd25519), new Date(1_800_000_000_150), 0);
  const refused = (err: unknown): boolean => (err as { code?: string; retryable?: boolean }).code === 'INTEGRITY_FAILURE' && (err as { retryable?: boolean }).retryable === true;
  const cases: [string, Entry[]][] = [
    ['a gap', [entries[0], entries[1], entries[3]] as Entry[]],
    ['a repeated index', [entries[0], entries[1], entries[1]] as Entry[]],
    ['a stray record after a committed one at its index', [...entries.slice(0, 4), stray]],
    ['a stray record before the committed one', [...entries.slice(0, 3), stray, entries[3] as Entry]],
    ['another partition', [foreign]],
    ['not from the start', entries.slice(1)],
  ];
  for (const [what, read] of cases) {
    const chain = new PartitionChain(1);
    let accepted = 0;
    assert.throws(() => {
      for (const e of read) {
        chain.replay(e);
        accepted += 1;
      }
    }, refused, what);
    assert.equal(chain.size, accepted, `${what}: the entries before the break are kept`);
    assert.equal(chain.head, accepted === 0 ? new PartitionChain(1).head : read[accepted - 1]?.hash, `${what}: the head is the last entry accepted`);
  }
});
