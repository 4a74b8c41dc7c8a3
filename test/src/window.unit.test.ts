import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthorityState, createStatement, nodeEd25519, signStatement, statementHash, type BodyOf, type Entry, type Envelope, type Statement } from '@agent-ledger/core';
import type { ConsumedOffset, InBatch, InRecord, LogBus, OutRecord, Subscription, TransactionalWriter } from '@agent-ledger/kafka';
import { PartitionSequencer, topicNames } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';
import { assertFailsAt, assertValid, recordDecision, verify } from './replay-support.js';

// One bound, live and offline: the sequencer's admission refuses a proposal
// (RATE_LIMIT, recorded as intake.rejected) on a partition whose undecided
// proposals fill the replay window verify-chain holds, and verify-chain fails
// a bundle holding a proposal beyond it. Tested with a window of two.

const topics = topicNames('unit');
const WINDOW = { maxPending: 2 };

/** A log in memory: what writers commit is readable back, as a restarted sequencer reads it. */
class CommitLog implements LogBus {
  readonly committed: OutRecord[] = [];
  /** false: read back without headers, as records written before the sequencer's recovery headers. */
  constructor(readonly keepHeaders = true) {}
  async ensureTopics(): Promise<void> {}
  async writer(id: string): Promise<TransactionalWriter> {
    return {
      transactionalId: id,
      commit: async (records: readonly OutRecord[], _consumed?: ConsumedOffset) => {
        this.committed.push(...records);
      },
      close: async () => undefined,
    };
  }
  async publish(): Promise<void> {}
  async subscribe(): Promise<Subscription> {
    return { stop: async () => undefined };
  }
  #records(topic: string, partition: number): OutRecord[] {
    return this.committed.filter((r) => r.topic === topic && r.partition === partition);
  }
  async *readRange(topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord> {
    const records = this.#records(topic, partition);
    for (let offset = Number(fromOffset); offset < records.length; offset++) {
      const record = records[offset] as OutRecord;
      yield { topic, partition, offset: String(offset), key: null, value: Buffer.from(record.value), timestamp: '0', headers: this.keepHeaders ? (record.headers ?? {}) : {} };
    }
  }
  async endOffsets(topic: string): Promise<ReadonlyMap<number, string>> {
    const ends = new Map<number, string>();
    for (const record of this.committed) if (record.topic === topic) ends.set(record.partition, String(this.#records(topic, record.partition).length));
    return ends;
  }
  async offsetsForTime(topic: string): Promise<ReadonlyMap<number, string>> {
    const starts = new Map<number, string>();
    for (const record of this.committed) if (record.topic === topic) starts.set(record.partition, '0');
    return starts;
  }
  async committedOffsets(): Promise<ReadonlyMap<number, string | null>> {
    return new Map();
  }
  async close(): Promise<void> {}
}

/** Intake records of events partition 1 (intake partition p feeds ledger partition p). */
function intake(envelopes: readonly Envelope[], from: number): InBatch {
  return {
    topic: topics.intake,
    partition: 1,
    records: envelopes.map((envelope, k) => ({ topic: topics.intake, partition: 1, offset: String(from + k), key: null, value: Buffer.from(JSON.stringify(envelope)), timestamp: '0', headers: {} })),
  };
}

test('admission refuses a proposal beyond the window with RATE_LIMIT, and admits again once one is decided', async () => {
  const ledger = new TestLedger({ eventPartitions: 1 });
  const genesis = (JSON.parse(ledger.lines()[1] as string) as Entry).envelope.statement as Statement;
  const authority = new AuthorityState(ledger.trustRoot);
  authority.apply(genesis, 0, Date.now());
  const bus = new CommitLog();
  const sequencer = new PartitionSequencer(1, bus, { trustRoot: ledger.trustRoot, eventPartitions: 1, sequencer: ledger.sequencer, checkpointEvery: 1_000, checkpointIntervalMs: 3_600_000, topics, replayWindow: WINDOW }, { current: () => ({ state: authority, size: 1 }) });
  await sequencer.start();
  const sign = <T extends 'proposal.submitted' | 'decision.recorded'>(type: T, body: BodyOf<T>, signer: typeof ledger.agent): Envelope => signStatement(createStatement(type, body, signer, new Date()), [signer], nodeEd25519);
  const proposal = (n: number): Envelope => sign('proposal.submitted', {
    agentId: ledger.agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: `ls /srv/${n}` }, query: '', labels: [], channel: 'api', context: {},
  }, ledger.agent);
  const first = [proposal(1), proposal(2), proposal(3)];
  await sequencer.handleBatch(intake(first, 0));
  const decision = sign('decision.recorded', { agentId: ledger.agent.principal, proposal: statementHash(first[0]?.statement as Statement), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, ledger.gate);
  await sequencer.handleBatch(intake([decision, proposal(4)], 3));
  const entries = bus.committed.filter((r) => r.topic === topics.events).map((r) => JSON.parse(String(r.value)) as Entry);
  const outcome = entries.map((e) => (e.envelope.statement.type === 'intake.rejected' ? `rejected ${(e.envelope.statement.body as { code: string }).code}` : e.envelope.statement.type));
  assert.deepEqual(outcome, ['proposal.submitted', 'proposal.submitted', 'rejected RATE_LIMIT', 'decision.recorded', 'proposal.submitted']);
  await sequencer.stop();
});

test('verify-chain applies the same bound: a proposal beyond the window fails where admission would have refused it', async () => {
  const SAFE = { args: { command: 'ls -la' }, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', context: {} };
  const honest = new TestLedger();
  const p1 = honest.propose(SAFE);
  honest.propose({ ...SAFE, args: { command: 'ls /srv' } });
  // The first is decided (allow) before the third arrives: it fits.
  assert.equal(recordDecision(honest, p1).expected.outcome, 'allow');
  honest.propose({ ...SAFE, args: { command: 'ls /tmp' } });
  assertValid(await verify(honest, { replay: WINDOW }));

  const over = new TestLedger();
  over.propose(SAFE);
  over.propose({ ...SAFE, args: { command: 'ls /srv' } });
  const third = over.propose({ ...SAFE, args: { command: 'ls /tmp' } });
  assertFailsAt(await verify(over, { replay: WINDOW }), 'POLICY_VIOLATION', third.entry);
  assertValid(await verify(over, { replay: { maxPending: 3 } }));
});

for (const keepHeaders of [true, false]) test(`a sequencer restarted from a checkpoint still counts the proposals open before it (${keepHeaders ? 'recovery headers' : 'entries without headers'})`, async () => {
  const ledger = new TestLedger({ eventPartitions: 1 });
  const genesis = (JSON.parse(ledger.lines()[1] as string) as Entry).envelope.statement as Statement;
  const authority = new AuthorityState(ledger.trustRoot);
  authority.apply(genesis, 0, Date.now());
  const bus = new CommitLog(keepHeaders);
  const settings = { trustRoot: ledger.trustRoot, eventPartitions: 1, sequencer: ledger.sequencer, checkpointEvery: 2, checkpointIntervalMs: 3_600_000, topics, replayWindow: WINDOW };
  const view = { current: () => ({ state: authority, size: 1 }) };
  const proposal = (n: number): Envelope =>
    signStatement(
      createStatement('proposal.submitted', { agentId: ledger.agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: `ls /srv/${n}` }, query: '', labels: [], channel: 'api', context: {} }, ledger.agent, new Date()),
      [ledger.agent],
      nodeEd25519,
    );
  const before = new PartitionSequencer(1, bus, settings, view);
  await before.start();
  await before.handleBatch(intake([proposal(1), proposal(2)], 0));
  await before.stop();
  assert.ok(bus.committed.some((r) => r.topic === topics.checkpoints), 'the two proposals were sealed in a checkpoint');

  const after = new PartitionSequencer(1, bus, settings, view);
  await after.start();
  assert.equal(after.lastRecovery?.from, 'checkpoint');
  await after.handleBatch(intake([proposal(3)], 2));
  await after.stop();
  const last = JSON.parse(String(bus.committed.filter((r) => r.topic === topics.events).at(-1)?.value)) as Entry;
  assert.equal(last.envelope.statement.type, 'intake.rejected');
  assert.equal((last.envelope.statement.body as { code: string }).code, 'RATE_LIMIT');
});

test('ledger dev (sealAnswers): the batch that chains a decision carries a checkpoint covering it; otherwise the interval decides', async () => {
  const ledger = new TestLedger({ eventPartitions: 1 });
  const genesis = (JSON.parse(ledger.lines()[1] as string) as Entry).envelope.statement as Statement;
  const sign = <T extends 'proposal.submitted' | 'decision.recorded'>(type: T, body: BodyOf<T>, signer: typeof ledger.agent): Envelope => signStatement(createStatement(type, body, signer, new Date()), [signer], nodeEd25519);
  const proposal = sign('proposal.submitted', {
    agentId: ledger.agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls /srv' }, query: '', labels: [], channel: 'api', context: {},
  }, ledger.agent);
  const decision = sign('decision.recorded', { agentId: ledger.agent.principal, proposal: statementHash(proposal.statement), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, ledger.gate);
  const run = async (sealAnswers: boolean): Promise<{ afterProposal: number; sizes: number[]; decisionIndex: number }> => {
    const authority = new AuthorityState(ledger.trustRoot);
    authority.apply(genesis, 0, Date.now());
    const bus = new CommitLog();
    // An interval no test run reaches: only sealAnswers can seal here.
    const sequencer = new PartitionSequencer(1, bus, { trustRoot: ledger.trustRoot, eventPartitions: 1, sequencer: ledger.sequencer, checkpointEvery: 1_000, checkpointIntervalMs: 3_600_000, sealAnswers, topics }, { current: () => ({ state: authority, size: 1 }) });
    await sequencer.start();
    const checkpoints = (): { size: number }[] => bus.committed.filter((r) => r.topic === topics.checkpoints).map((r) => JSON.parse(String(r.value)) as { size: number });
    await sequencer.handleBatch(intake([proposal], 0));
    const afterProposal = checkpoints().length;
    await sequencer.handleBatch(intake([decision], 1));
    const events = bus.committed.filter((r) => r.topic === topics.events).map((r) => JSON.parse(String(r.value)) as Entry);
    await sequencer.stop();
    const decided = events.find((e) => e.envelope.statement.type === 'decision.recorded');
    assert.ok(decided !== undefined, 'the decision was chained');
    return { afterProposal, sizes: checkpoints().map((c) => c.size), decisionIndex: decided.index };
  };
  const dev = await run(true);
  assert.equal(dev.afterProposal, 0, 'a proposal alone waits for the interval');
  assert.deepEqual(dev.sizes, [dev.decisionIndex + 1], 'one checkpoint, covering the decision');
  const kafka = await run(false);
  assert.deepEqual(kafka.sizes, [], 'without sealAnswers nothing is sealed before the interval');
});
