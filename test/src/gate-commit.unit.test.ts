import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionChain, createStatement, nodeEd25519, sha256Hex, signStatement, statementHash, type BodyOf, type Entry, type Envelope, type Signer, type StatementType } from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { evolve, initialState } from '@agent-ledger/gate';
import type { ConsumedOffset, InBatch, InRecord, LogBus, OutRecord, SubscribeOptions, Subscription, TransactionalWriter } from '@agent-ledger/kafka';
import { AuthorityFollower, DeadlineTimer, GateWorker, newSigner, topicNames } from '@agent-ledger/ledger';

// The gate worker and the timer against a fake log: a commit that fails in
// the middle of a batch loses no decision and makes none twice, the liveness
// check counts what has no decision past its due time, a failed timer tick is
// retried, and an answer on another partition never counts.

const topics = topicNames('unit');
const gateKey = newSigner('service:gate');
const timerKey = newSigner('service:timer');
const agent = newSigner('agent:billing-bot');
const dana = newSigner('approver:dana');
const T0 = Date.parse('2026-11-24T05:00:00.000Z');

class FakeWriter implements TransactionalWriter {
  readonly transactionalId: string;
  readonly #bus: FakeBus;
  constructor(id: string, bus: FakeBus) {
    this.transactionalId = id;
    this.#bus = bus;
  }
  async commit(records: readonly OutRecord[], consumed?: ConsumedOffset): Promise<void> {
    this.#bus.commits += 1;
    if (this.#bus.failCommits.has(this.#bus.commits)) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'broker went away mid-commit', { retryable: true });
    this.#bus.committed.push(...records);
    if (consumed !== undefined) this.#bus.offsets.set(consumed.partition, consumed.nextOffset);
  }
  async close(): Promise<void> {}
}

class FakeBus implements LogBus {
  readonly committed: OutRecord[] = [];
  readonly published: OutRecord[] = [];
  readonly offsets = new Map<number, string>();
  readonly failCommits = new Set<number>();
  commits = 0;
  failPublishes = 0;
  onBatch: ((batch: InBatch) => Promise<void>)[] = [];
  async ensureTopics(): Promise<void> {}
  async writer(id: string): Promise<TransactionalWriter> {
    return new FakeWriter(id, this);
  }
  async publish(records: readonly OutRecord[]): Promise<void> {
    if (this.failPublishes > 0) {
      this.failPublishes -= 1;
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'broker unreachable', { retryable: true });
    }
    this.published.push(...records);
  }
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.onBatch.push((batch) => options.onBatch(batch));
    return { stop: async () => undefined };
  }
  async *readRange(): AsyncIterable<InRecord> {}
  async endOffsets(): Promise<ReadonlyMap<number, string>> {
    return new Map();
  }
  async offsetsForTime(): Promise<ReadonlyMap<number, string>> {
    return new Map();
  }
  async committedOffsets(): Promise<ReadonlyMap<number, string | null>> {
    return new Map();
  }
  async close(): Promise<void> {}
}

/** Events partitions as the sequencer would chain them (authority index 0: the fake follower has nothing). */
class Events {
  readonly chains = new Map<number, PartitionChain>();
  clock = T0;
  say<T extends StatementType>(type: T, body: BodyOf<T>, signer: Signer, partition = 1): Entry {
    this.clock += 10;
    const envelope = signStatement(createStatement(type, body, signer, new Date(this.clock)), [signer], nodeEd25519);
    return this.append(envelope, partition);
  }
  append(envelope: Envelope, partition: number): Entry {
    let chain = this.chains.get(partition);
    if (chain === undefined) {
      chain = new PartitionChain(partition);
      this.chains.set(partition, chain);
    }
    return chain.append(envelope, new Date(this.clock), 0);
  }
}

function record(entry: Entry): InRecord {
  return { topic: topics.events, partition: entry.partition - 1, offset: String(entry.index), key: null, value: Buffer.from(JSON.stringify(entry)), timestamp: '0', headers: {} };
}

function batchOf(entries: readonly Entry[]): InBatch {
  return { topic: topics.events, partition: (entries[0] as Entry).partition - 1, records: entries.map(record) };
}

function statementsOf(records: readonly OutRecord[]): { type: StatementType; body: Record<string, unknown>; envelope: Envelope }[] {
  return records.map((r) => {
    const envelope = JSON.parse(String(r.value)) as Envelope;
    return { type: envelope.statement.type, body: envelope.statement.body as Record<string, unknown>, envelope };
  });
}

function proposal(command: string): BodyOf<'proposal.submitted'> {
  return { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command }, query: '', labels: [], channel: 'api', context: {} };
}

async function startGate(bus: FakeBus, transactionBytes: number): Promise<GateWorker> {
  const follower = new AuthorityFollower(bus, { v: 1, origin: 'ledger.test/unit', rootKeys: [newSigner('root:1').keyId], threshold: 1 }, topics);
  const gate = new GateWorker(bus, follower, { gate: gateKey, eventPartitions: 2, topics, transactionBytes }, { initialState, evolve } as never);
  await gate.start();
  return gate;
}

test('a commit failing mid-batch loses no decision and makes none twice', async () => {
  const bus = new FakeBus();
  const gate = await startGate(bus, 1_500);
  const events = new Events();
  const proposals = Array.from({ length: 24 }, (_, i) => events.say('proposal.submitted', proposal(i % 3 === 0 ? `sudo systemctl restart app-${i}` : `ls -la /srv/app-${i}`), agent));
  bus.failCommits.add(3);
  const deliver = bus.onBatch[0] as (batch: InBatch) => Promise<void>;
  await assert.rejects(deliver(batchOf(proposals)));
  assert.ok(bus.committed.length > 0, 'earlier chunks of the batch committed');
  // Kafka redelivers the batch from the last committed offset onward; the worker skips what it committed.
  const from = Number(bus.offsets.get(0) ?? '0');
  await deliver(batchOf(proposals.slice(from)));
  const decisions = statementsOf(bus.committed).filter((s) => s.type === 'decision.recorded');
  const byProposal = new Map<string, number>();
  for (const d of decisions) byProposal.set(d.body.proposal as string, (byProposal.get(d.body.proposal as string) ?? 0) + 1);
  assert.equal(byProposal.size, proposals.length, 'every proposal got a decision');
  assert.deepEqual([...new Set(byProposal.values())], [1], 'and exactly one');
  assert.ok(bus.commits > 3, 'the batch went out in several transactions');
  assert.equal(gate.counters.commitFailures, 1);
  assert.equal(gate.counters.decisions, proposals.length, 'counted once each, after commit');

  // Liveness: until the decisions are sequenced back, every proposal is overdue once past the grace.
  assert.equal(gate.overdueProposals(events.clock + 1_000, 30_000), 0);
  assert.equal(gate.overdueProposals(events.clock + 60_000, 30_000), proposals.length);
  const sequenced = statementsOf(bus.committed).map((s) => events.append(s.envelope, 1));
  await deliver(batchOf(sequenced));
  const deadlines = statementsOf(bus.committed).filter((s) => s.type === 'confirmation.requested').map((s) => Date.parse(s.body.deadline as string));
  assert.ok(deadlines.length > 0, 'some proposals wait for a human');
  // Only the confirmations still waiting count, and only past their deadline plus the grace.
  assert.equal(gate.overdueProposals(Math.min(...deadlines) + 30_000, 30_000), 0);
  assert.equal(gate.overdueProposals(Math.max(...deadlines) + 30_001, 30_000), deadlines.length);
  await gate.stop();
});

test('an answer on another partition is refused by the gate and the timer still signs the timeout', async () => {
  const bus = new FakeBus();
  const gate = await startGate(bus, 1 << 20);
  const events = new Events();
  const deliver = bus.onBatch[0] as (batch: InBatch) => Promise<void>;
  const p = events.say('proposal.submitted', proposal('sudo systemctl restart nginx'), agent);
  await deliver(batchOf([p]));
  const first = statementsOf(bus.committed).map((s) => events.append(s.envelope, 1));
  const request = first.find((e) => e.envelope.statement.type === 'confirmation.requested') as Entry;
  assert.ok(request, 'left to a human');
  await deliver(batchOf(first.slice()));
  const before = bus.committed.length;
  // The approval names the proposal and its request, but is sequenced on partition 2 (its agentId routes there).
  const body = request.envelope.statement.body as BodyOf<'confirmation.requested'>;
  const misrouted = events.say('human.response', { agentId: 'agent:other', proposal: body.proposal, request: statementHash(request.envelope.statement), answer: 'approve', assurance: 'self_signed', platformIdentity: null }, dana, 2);
  await (bus.onBatch[0] as (batch: InBatch) => Promise<void>)(batchOf([misrouted]));
  const after = statementsOf(bus.committed.slice(before));
  assert.deepEqual(after.map((s) => [s.type, s.body.code]), [['refusal.recorded', 'STALE_APPROVAL']]);
  assert.equal(after.some((s) => s.type === 'decision.recorded'), false, 'no allow');

  const timer = new DeadlineTimer(bus, timerKey, topics);
  for (const e of [p, ...first]) timer.observe(e);
  timer.observe(misrouted);
  bus.failPublishes = 1;
  const late = Date.parse(body.deadline) + 1;
  await timer.tick(late);
  assert.equal(timer.counters.tickFailures, 1, 'a failed publish is counted, never thrown');
  await timer.tick(late);
  assert.deepEqual(statementsOf(bus.published).map((s) => s.type), ['timeout.recorded', 'escalation.raised']);
  await timer.tick(late + 1_000);
  assert.equal(bus.published.length, 2, 'signed once');

  // The sequencer rejected the timeout (its clock had not reached the deadline): the timer signs the timeout again, alone
  // (its escalation was admitted: no second page), once per rejection; a rejection for another reason is not retried.
  const sequencer = newSigner('service:sequencer');
  const reject = (input: string, detail = `timeout sequenced before its deadline ${body.deadline}`): Entry => events.say('intake.rejected', { agentId: 'agent:billing-bot', code: ReasonCode.POLICY_VIOLATION, detail, input }, sequencer);
  const inputOf = (record: OutRecord | undefined): string => sha256Hex(String(record?.value));
  timer.observe(reject(sha256Hex('some other record')));
  await timer.tick(late + 2_000);
  assert.equal(bus.published.length, 2, 'a rejection of another record changes nothing');
  timer.observe(reject(inputOf(bus.published[0])));
  await timer.tick(late + 2_500);
  assert.equal(bus.published.length, 2, 'nothing is signed again while part of the group is still unanswered');
  // Its escalation, sequenced after it, was admitted.
  timer.observe(events.append((statementsOf(bus.published)[1] as { envelope: Envelope }).envelope, 1));
  await timer.tick(late + 3_000);
  assert.deepEqual(statementsOf(bus.published.slice(2)).map((s) => s.type), ['timeout.recorded']);
  assert.notEqual(statementsOf(bus.published)[2]?.envelope.statement.id, statementsOf(bus.published)[0]?.envelope.statement.id, 'a new statement, not a replay');
  await timer.tick(late + 4_000);
  assert.equal(bus.published.length, 3, 'signed again once');
  timer.observe(reject(inputOf(bus.published[2]), 'timeout names another request or deadline than the proposal\'s confirmation'));
  await timer.tick(late + 5_000);
  assert.equal(bus.published.length, 3, 'another rejection is not retried');
  assert.equal(timer.counters.rejected, 2);
  await gate.stop();
});
