import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionChain, createStatement, nodeEd25519, signStatement, type BodyOf, type Entry, type Envelope } from '@agent-ledger/core';
import { evolve, initialState } from '@agent-ledger/gate';
import type { InBatch } from '@agent-ledger/kafka';
import { AuthorityFollower, GateWorker, newSigner, topicNames } from '@agent-ledger/ledger';
import { MemoryLog } from './memory-log.js';

// A restarted gate rebuilds its proposal-life state from where the newest
// checkpoint says open proposals begin (never past its own committed
// offset), not from offset 0, and still decides every open proposal exactly
// once; proposals closed before that point are never decided again.

const topics = topicNames('unit');
const gateKey = newSigner('service:gate');
const agent = newSigner('agent:billing-bot');
const T0 = Date.parse('2026-11-24T05:00:00.000Z');

function proposal(command: string): BodyOf<'proposal.submitted'> {
  return { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command }, query: '', labels: [], channel: 'api', context: {} };
}

/** Sequences envelopes onto events partition 1 (Kafka partition 0), the record timestamp being the sequencing time. */
class Sequencer {
  readonly chain = new PartitionChain(1);
  clock = T0;
  constructor(readonly log: MemoryLog) {}
  append(envelope: Envelope): Entry {
    this.clock += 10;
    const entry = this.chain.append(envelope, new Date(this.clock), 0);
    this.log.records(topics.events, 0).push({ topic: topics.events, partition: 0, value: JSON.stringify(entry), headers: { at: String(this.clock) } });
    return entry;
  }
  propose(command: string): Entry {
    return this.append(signStatement(createStatement('proposal.submitted', proposal(command), agent, new Date(this.clock + 10)), [agent], nodeEd25519));
  }
  /** Sequences what the gate wrote to intake since `from`. */
  sequenceIntake(from: number): number {
    const intake = this.log.records(topics.intake, 1);
    for (const r of intake.slice(from)) this.append(JSON.parse(String(r.value)) as Envelope);
    return intake.length;
  }
}

async function gateOn(log: MemoryLog): Promise<GateWorker> {
  const follower = new AuthorityFollower(log, { v: 1, origin: 'ledger.test/unit', rootKeys: [newSigner('root:1').keyId], threshold: 1 }, topics);
  const gate = new GateWorker(log, follower, { gate: gateKey, eventPartitions: 1, topics }, { initialState, evolve } as never);
  await gate.start();
  return gate;
}

function decisionsOf(log: MemoryLog): string[] {
  return log.records(topics.intake, 1).map((r) => JSON.parse(String(r.value)) as Envelope).filter((e) => e.statement.type === 'decision.recorded').map((e) => (e.statement.body as { proposal: string }).proposal);
}

test('a restarted gate catches up from the checkpoint, not offset 0, and decides each open proposal once', async () => {
  const log = new MemoryLog();
  const sequencer = new Sequencer(log);
  const first = await gateOn(log);
  const deliver = async (gate: number, from: number) => {
    const records = log.records(topics.events, 0);
    const batch = { topic: topics.events, partition: 0, records: records.slice(from).map((_, k) => log.inRecord(topics.events, 0, from + k)) };
    await (log.handlers.at(gate) as (b: InBatch) => Promise<void>)(batch);
  };
  // Forty proposals, all decided (allowed) and their decisions sequenced.
  for (let n = 0; n < 40; n++) sequencer.propose(`ls /srv/app-${n}`);
  await deliver(0, 0);
  let intakeSeen = sequencer.sequenceIntake(0);
  await deliver(0, 40);
  assert.equal(new Set(decisionsOf(log)).size, 40);
  await first.stop();

  // Ten minutes later, two proposals nobody has decided yet; the sequencer seals a checkpoint naming the oldest.
  sequencer.clock += 600_000;
  const open = [sequencer.propose('ls /srv/late-1'), sequencer.propose('ls /srv/late-2')];
  const lifeFromMs = Date.parse(open[0]?.sequencedAt as string);
  log.records(topics.checkpoints, 1).push({ topic: topics.checkpoints, partition: 1, value: JSON.stringify({ partition: 1, size: sequencer.chain.size, note: 'unit', sealedAt: new Date(sequencer.clock).toISOString(), lifeFromMs }) });

  const handlersBefore = log.handlers.length;
  const restarted = await gateOn(log);
  const caught = restarted.catchUp.get(0);
  const openOffset = log.records(topics.events, 0).length - 2;
  assert.ok(caught !== undefined && Number(caught.from) > 0, `catch-up starts after offset 0 (${caught?.from})`);
  assert.ok(Number(caught.from) <= openOffset, 'and no later than the first open proposal');
  assert.equal(caught.read, log.records(topics.events, 0).length - Number(caught.from));

  // Kafka redelivers from the gate's committed offset, even from 0: only the open proposals are decided, once each.
  const decidedBefore = decisionsOf(log).length;
  await deliver(handlersBefore, 0);
  const fresh = decisionsOf(log).slice(decidedBefore);
  assert.equal(fresh.length, 2, 'both open proposals decided, nothing decided again');
  intakeSeen = sequencer.sequenceIntake(intakeSeen);
  await deliver(handlersBefore, openOffset);
  assert.equal(decisionsOf(log).length, decidedBefore + 2, 'exactly once');
  assert.ok(intakeSeen > 0);
  await restarted.stop();
});

test('without a checkpoint, or behind its own committed offset, the catch-up reads from there', async () => {
  const log = new MemoryLog();
  const sequencer = new Sequencer(log);
  for (let n = 0; n < 5; n++) sequencer.propose(`ls /tmp/${n}`);
  const gate = await gateOn(log);
  assert.deepEqual(gate.catchUp.get(0), { from: '0', read: 5, recalled: 0 }, 'no checkpoint: from the start');
  await gate.stop();

  // A checkpoint says the open set begins late, but the gate's own group stands earlier: it reads from its offset.
  log.records(topics.checkpoints, 1).push({ topic: topics.checkpoints, partition: 1, value: JSON.stringify({ partition: 1, size: 5, note: 'unit', sealedAt: new Date(sequencer.clock + 3_600_000).toISOString(), lifeFromMs: sequencer.clock + 3_600_000 }) });
  log.offsets.set(`${topics.group('gate')}|${topics.events}/0`, '2');
  const behind = await gateOn(log);
  assert.deepEqual(behind.catchUp.get(0), { from: '2', read: 3, recalled: 0 });
  await behind.stop();
});
