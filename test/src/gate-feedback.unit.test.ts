import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStatement, nodeEd25519, sha256Hex, signStatement, statementHash, type BodyOf, type Entry, type Envelope, type StatementType } from '@agent-ledger/core';
import { ReasonCode } from '@agent-ledger/refusals';
import { evolve, initialState } from '@agent-ledger/gate';
import { AuthorityFollower, DeadlineTimer, GateWorker, REDECISIONS, newSigner, topicNames } from '@agent-ledger/ledger';
import { evolve as evolveLife, initialState as initialLife, lifeEntryOf, oldestOpenMs } from '@agent-ledger/rulebook';
import { MemoryLog, TestSequencer, type IntakeVerdict } from './memory-log.js';

// The gate's feedback loop from the sequencer, on a log in memory with a
// sequencer that rejects what the test says: a decision or request the
// sequencer rejected is decided again once (a new statement, without what
// was admitted), never while part of it is unanswered, never once the
// proposal's final decision is on the log, at most REDECISIONS times (then
// a metric and a log line), and a restarted gate recalls what its
// predecessor signed from intake. The timer's timeouts ride the same loop.

const topics = topicNames('unit');
const gateKey = newSigner('service:gate');
const timerKey = newSigner('service:timer');
const agent = newSigner('agent:billing-bot');
const dana = newSigner('approver:dana');
const T0 = Date.parse('2026-11-24T05:00:00.000Z');
const STALE = { code: ReasonCode.REPLAY, detail: 'statement was not fresh when sequenced' } as const;
const ALLOWED = 'ls -la /srv/app';
const NEEDS_HUMAN = 'sudo systemctl restart nginx';

/** One events partition, its intake, a test sequencer and the gate (restartable) over them. */
class Bench {
  readonly log = new MemoryLog();
  readonly sequencer = new TestSequencer(this.log, topics, T0);
  /** What the gates told the operator. */
  readonly said: string[] = [];
  gate: GateWorker | undefined;
  #handler = -1;
  #delivered = 0;

  /** Starts a gate (again): Kafka then delivers from its committed offset. */
  async startGate(): Promise<GateWorker> {
    await this.gate?.stop();
    const follower = new AuthorityFollower(this.log, { v: 1, origin: 'ledger.test/unit', rootKeys: [newSigner('root:1').keyId], threshold: 1 }, topics);
    this.#handler = this.log.handlers.length;
    this.gate = new GateWorker(this.log, follower, { gate: gateKey, eventPartitions: 1, topics, log: (line) => this.said.push(line) }, { initialState, evolve } as never);
    await this.gate.start();
    this.#delivered = Number((await this.log.committedOffsets(topics.group('gate'), topics.events)).get(0) ?? '0');
    return this.gate;
  }

  /** Delivers to the gate the events it has not been given yet (on a failure they come again). */
  async deliver(): Promise<void> {
    const end = this.log.records(topics.events, 0).length;
    await this.log.deliver(this.#handler, topics.events, 0, this.#delivered);
    this.#delivered = end;
  }

  propose(command: string): Entry {
    return this.sequencer.say('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command }, query: '', labels: [], channel: 'api', context: {} }, agent);
  }

  /** Statements on intake (what the gate and the timer signed), from the `from`-th on. */
  intake(from = 0): Envelope[] {
    return this.log.records(topics.intake, 1).slice(from).map((r) => JSON.parse(String(r.value)) as Envelope);
  }

  /** Sequences what is on intake (at most `count` records): rejected as `verdicts` says by statement type, else admitted. */
  sequence(verdicts: Partial<Record<StatementType, IntakeVerdict>> = {}, count = Infinity): Entry[] {
    return this.sequencer.sequenceIntake((envelope) => verdicts[envelope.statement.type] ?? 'admit', count);
  }

  /** Entries of the events log about `proposal`, by type. */
  onLog(proposal: Entry, type: StatementType): Entry[] {
    const hash = statementHash(proposal.envelope.statement);
    return this.log.records(topics.events, 0).map((r) => JSON.parse(String(r.value)) as Entry).filter((e) => e.envelope.statement.type === type && (e.envelope.statement.body as { proposal?: string }).proposal === hash);
  }
}

function typesOf(envelopes: readonly Envelope[]): string[] {
  return envelopes.map((e) => e.statement.type).filter((t) => t !== 'screening.verdict');
}

function only(envelopes: readonly Envelope[], type: StatementType): Envelope {
  const found = envelopes.filter((e) => e.statement.type === type);
  assert.equal(found.length, 1, `one ${type}`);
  return found[0] as Envelope;
}

test('a decision the sequencer rejected is decided again once, with a new statement; another record\'s rejection changes nothing', async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const p = b.propose(ALLOWED);
  await b.deliver();
  const first = b.intake();
  const decision = only(first, 'decision.recorded');
  assert.equal((decision.statement.body as BodyOf<'decision.recorded'>).outcome, 'allow');

  // A rejection naming some other input is not the gate's.
  b.sequencer.say('intake.rejected', { agentId: agent.principal, code: ReasonCode.REPLAY, detail: STALE.detail, input: sha256Hex('another record') }, b.sequencer.signer);
  await b.deliver();
  assert.equal(b.intake().length, first.length, 'nothing signed for another record\'s rejection');

  // The decision waited in intake too long; the classification before it was admitted.
  b.sequence({ 'decision.recorded': STALE });
  // The first try to commit the new decision fails: the batch comes again and the proposal is decided again once.
  b.log.failCommits = 1;
  await assert.rejects(b.deliver());
  assert.equal(b.intake().length, first.length, 'nothing visible of the failed commit');
  await b.deliver();
  const again = b.intake(first.length);
  assert.deepEqual(typesOf(again), ['decision.recorded'], 'decided again, without repeating the classification the sequencer admitted');
  const redecided = only(again, 'decision.recorded');
  assert.notEqual(redecided.statement.id, decision.statement.id, 'a new statement');
  assert.ok(Date.parse(redecided.statement.issuedAt) >= Date.parse(decision.statement.issuedAt));
  assert.deepEqual(redecided.statement.body, decision.statement.body, 'the same judgement at the same authority index');
  assert.deepEqual(gate.rejections, { signed_again: 1, abandoned: 0, moot: 0 });

  // Admitted this time: one decision on the log, and nothing more is signed.
  b.sequence();
  await b.deliver();
  assert.equal(b.onLog(p, 'decision.recorded').length, 1);
  assert.equal(b.intake().length, first.length + 1);
  assert.equal(gate.unanswered, 0, 'nothing left to watch');
  assert.equal(gate.overdueProposals(b.sequencer.clock + 60_000), 0);
  assert.deepEqual(b.said, []);
  await gate.stop();
});

test('never decided again once the proposal\'s decision is on the log: a duplicate rejected as such does not loop', async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const p = b.propose(ALLOWED);
  await b.deliver();
  const first = b.intake();
  // Another gate instance's decision for the same proposal is sequenced first.
  b.sequencer.say('decision.recorded', only(first, 'decision.recorded').statement.body as BodyOf<'decision.recorded'>, gateKey);
  b.sequence({ 'decision.recorded': { code: ReasonCode.POLICY_VIOLATION, detail: 'decision names no undecided proposal of this partition' } });
  await b.deliver();
  assert.equal(b.intake().length, first.length, 'nothing signed again');
  assert.deepEqual(gate.rejections, { signed_again: 0, abandoned: 0, moot: 1 });
  assert.equal(b.onLog(p, 'decision.recorded').length, 1);
  assert.equal(gate.unanswered, 0);
  await gate.stop();
});

test('a rejected request is requested again alone; nothing is signed again while part of a group is unanswered, and a group rejected twice is decided again once', async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const p = b.propose(NEEDS_HUMAN);
  await b.deliver();
  const first = b.intake();
  assert.deepEqual(typesOf(first), ['classification.recorded', 'decision.recorded', 'confirmation.requested']);
  const upToDecision = first.findIndex((e) => e.statement.type === 'decision.recorded') + 1;

  // The decision is rejected; its request is not sequenced yet.
  b.sequence({ 'decision.recorded': STALE }, upToDecision);
  await b.deliver();
  assert.equal(b.intake().length, first.length, 'nothing while the request is still unanswered');
  // The request is rejected too (no decision left it to a human): one decision again, with its request.
  b.sequence({ 'confirmation.requested': { code: ReasonCode.POLICY_VIOLATION, detail: 'confirmation requested for a proposal the gate did not leave to a human' } });
  await b.deliver();
  const second = b.intake(first.length);
  assert.deepEqual(typesOf(second), ['decision.recorded', 'confirmation.requested'], 'once, without the admitted classification');

  // This time the decision is admitted and the request alone is rejected: the request is signed again, alone, with a later deadline.
  b.sequence({ 'confirmation.requested': STALE });
  await b.deliver();
  const third = b.intake(first.length + second.length);
  assert.deepEqual(typesOf(third), ['confirmation.requested']);
  const deadlineOf = (e: Envelope): number => Date.parse((e.statement.body as BodyOf<'confirmation.requested'>).deadline);
  assert.ok(deadlineOf(only(third, 'confirmation.requested')) >= deadlineOf(only(second, 'confirmation.requested')));
  b.sequence();
  await b.deliver();
  assert.deepEqual(b.onLog(p, 'decision.recorded').map((e) => (e.envelope.statement.body as BodyOf<'decision.recorded'>).outcome), ['verify_first']);
  assert.equal(b.onLog(p, 'confirmation.requested').length, 1);
  assert.deepEqual(gate.rejections, { signed_again: 2, abandoned: 0, moot: 0 });
  assert.equal(gate.overdueProposals(deadlineOf(only(third, 'confirmation.requested')) + 1_000), 0, 'waiting for a human, not overdue');
  await gate.stop();
});

test('a rejected final decision is made again from the answers on the log', async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const p = b.propose(NEEDS_HUMAN);
  await b.deliver();
  b.sequence();
  await b.deliver();
  const request = b.onLog(p, 'confirmation.requested')[0] as Entry;
  const sent = b.intake().length;
  b.sequencer.say('human.response', { agentId: agent.principal, proposal: statementHash(p.envelope.statement), request: statementHash(request.envelope.statement), answer: 'approve', assurance: 'self_signed', platformIdentity: null }, dana);
  await b.deliver();
  // (The approval came faster than one reads: the gate also signs its rubber-stamp signal.)
  const decided = (from: number): unknown[] => b.intake(from).filter((e) => e.statement.type === 'decision.recorded').map((e) => (e.statement.body as BodyOf<'decision.recorded'>).outcome);
  assert.deepEqual(decided(sent), ['allow']);
  b.sequence({ 'decision.recorded': STALE });
  const before = b.intake().length;
  await b.deliver();
  assert.deepEqual(typesOf(b.intake(before)), ['decision.recorded'], 'the final decision alone');
  assert.deepEqual(decided(before), ['allow']);
  b.sequence();
  await b.deliver();
  assert.deepEqual(b.onLog(p, 'decision.recorded').map((e) => (e.envelope.statement.body as BodyOf<'decision.recorded'>).outcome), ['verify_first', 'allow']);
  assert.deepEqual(gate.rejections, { signed_again: 1, abandoned: 0, moot: 0 });
  await gate.stop();
});

test(`after ${REDECISIONS} decisions again it gives up, counted and logged; a rejection no new statement cures is given up at once`, async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const p = b.propose(ALLOWED);
  await b.deliver();
  for (let n = 0; n <= REDECISIONS; n++) {
    b.sequence({ 'decision.recorded': STALE });
    await b.deliver();
  }
  const decisions = b.intake().filter((e) => e.statement.type === 'decision.recorded');
  assert.equal(decisions.length, 1 + REDECISIONS, 'the first decision and its decisions again');
  assert.equal(new Set(decisions.map((e) => e.statement.id)).size, decisions.length, 'each a new statement');
  assert.deepEqual(gate.rejections, { signed_again: REDECISIONS, abandoned: 1, moot: 0 });
  assert.equal(b.said.length, 1);
  assert.match(b.said[0] as string, new RegExp(`could not decide proposal ${statementHash(p.envelope.statement).slice(0, 12)}.*REPLAY.*gave up after ${REDECISIONS + 1} signing`));
  assert.equal(b.onLog(p, 'decision.recorded').length, 0);
  // Without a decision the proposal counts as overdue once past the grace.
  assert.equal(gate.overdueProposals(b.sequencer.clock + 60_000), 1);
  b.sequence();
  await b.deliver();
  assert.equal(b.intake().filter((e) => e.statement.type === 'decision.recorded').length, decisions.length, 'and it stays given up');

  const q = b.propose('ls -la /srv/other');
  await b.deliver();
  b.sequence({ 'decision.recorded': { code: ReasonCode.INVALID_SIGNATURE, detail: 'signature does not verify' } });
  await b.deliver();
  assert.equal(b.onLog(q, 'decision.recorded').length, 0);
  assert.equal(b.intake().filter((e) => e.statement.type === 'decision.recorded').length, decisions.length + 1, 'not decided again');
  assert.deepEqual(gate.rejections, { signed_again: REDECISIONS, abandoned: 2, moot: 0 });
  assert.match(b.said[1] as string, /INVALID_SIGNATURE.*gave up after 1 signing/);
  await gate.stop();
});

test('a restarted gate recalls from intake what its predecessor signed: a rejection after its committed offset is acted on once, one before it never again', async () => {
  const b = new Bench();
  await b.startGate();
  // Earlier proposals, decided and sequenced, ten minutes before.
  for (let n = 0; n < 3; n++) {
    b.propose(`ls -la /srv/early-${n}`);
    await b.deliver();
    b.sequence();
    await b.deliver();
  }
  b.sequencer.clock += 600_000;
  const p = b.propose(ALLOWED);
  await b.deliver();
  const sent = b.intake().length;
  // The gate stops; the sequencer then rejects its decision (it had waited too long in intake).
  await b.gate?.stop();
  b.sequence({ 'decision.recorded': STALE });
  // A rejected decision leaves the proposal open: the sequencer's checkpoint names it as where the open set begins.
  const life = initialLife();
  for (const r of b.log.records(topics.events, 0)) {
    const entry = JSON.parse(String(r.value)) as Entry;
    evolveLife(life, lifeEntryOf(entry, statementHash(entry.envelope.statement)));
  }
  const lifeFromMs = oldestOpenMs(life);
  assert.equal(lifeFromMs, Date.parse(p.sequencedAt));
  b.log.records(topics.checkpoints, 1).push({ topic: topics.checkpoints, partition: 1, value: JSON.stringify({ partition: 1, size: b.sequencer.chain.size, note: 'unit', sealedAt: new Date(b.sequencer.clock).toISOString(), lifeFromMs }) });

  const restarted = await b.startGate();
  const caught = restarted.catchUp.get(0);
  assert.ok(caught !== undefined && Number(caught.from) > 0, `the catch-up starts at the checkpoint's open set, not offset 0 (${caught?.from})`);
  assert.equal(restarted.overdueProposals(b.sequencer.clock + 60_000), 1, 'the fold from there holds the proposal, undecided');
  assert.equal(caught.recalled, 1, 'the one group its predecessor signed since then, read back from intake');
  assert.equal(restarted.unanswered, 1, 'its rejection is above the committed offset: still to act on');
  await b.deliver();
  assert.deepEqual(typesOf(b.intake(sent)), ['decision.recorded']);
  assert.deepEqual(restarted.rejections, { signed_again: 1, abandoned: 0, moot: 0 });

  // Restarted again after acting on it: the rejection is below the committed offset and is not acted on twice.
  const third = await b.startGate();
  assert.equal(third.catchUp.get(0)?.recalled, 2, 'both signings read back');
  assert.equal(third.unanswered, 1, 'only the decision signed again still waits for its answer');
  await b.deliver();
  assert.equal(b.intake().length, sent + 1, 'nothing signed again');
  b.sequence();
  await b.deliver();
  assert.equal(b.onLog(p, 'decision.recorded').length, 1);
  assert.equal(third.unanswered, 0);
  assert.equal(third.overdueProposals(b.sequencer.clock + 60_000), 0);
  await third.stop();
});

test('what a restarted gate recalls from intake is only its own: another key\'s records, records the API refused and unreadable ones carrying the header are skipped', async () => {
  const b = new Bench();
  await b.startGate();
  b.propose(ALLOWED);
  await b.deliver();
  await b.gate?.stop();
  const [own] = b.log.records(topics.intake, 1);
  assert.ok(own?.headers?.['ledger-attempt'] !== undefined, 'the gate\'s records carry their attempt');
  // Each as an attempt of its own: recalled, any of them would count.
  const firstMs = (own.headers['ledger-attempt'] as string).split(' ')[2] as string;
  const header = (key: string): Record<string, string> => ({ 'ledger-attempt': `${key} 1 ${firstMs}` });
  const mallory = newSigner('service:gate');
  const decision = only(b.intake(), 'decision.recorded');
  const forged = signStatement(createStatement('decision.recorded', decision.statement.body as BodyOf<'decision.recorded'>, mallory), [mallory], nodeEd25519);
  b.log.records(topics.intake, 1).push(
    { topic: topics.intake, partition: 1, value: JSON.stringify(forged), headers: header('forged') },
    { topic: topics.intake, partition: 1, value: JSON.stringify(decision), headers: { ...header('refused'), 'ledger-refused': 'REPLAY' } },
    { topic: topics.intake, partition: 1, value: '{"statement": ', headers: header('unreadable') },
    { topic: topics.intake, partition: 1, value: JSON.stringify(decision), headers: { 'ledger-attempt': 'not an attempt' } },
  );
  const restarted = await b.startGate();
  assert.equal(restarted.catchUp.get(0)?.recalled, 1);
  assert.equal(restarted.unanswered, 1);
  await restarted.stop();
});

test('the timer on the same loop: a stale timeout is signed again with its escalation when both were rejected, and not once the request is timed out by another', async () => {
  const b = new Bench();
  const gate = await b.startGate();
  const timer = new DeadlineTimer(b.log, timerKey, topics);
  let observed = 0;
  const observe = (): void => {
    const events = b.log.records(topics.events, 0);
    for (const r of events.slice(observed)) timer.observe(JSON.parse(String(r.value)) as Entry);
    observed = events.length;
  };
  const p = b.propose(NEEDS_HUMAN);
  await b.deliver();
  b.sequence();
  await b.deliver();
  observe();
  const request = b.onLog(p, 'confirmation.requested')[0] as Entry;
  const late = Date.parse((request.envelope.statement.body as BodyOf<'confirmation.requested'>).deadline) + 1;
  const sent = b.intake().length;
  await timer.tick(late);
  assert.deepEqual(typesOf(b.intake(sent)), ['timeout.recorded', 'escalation.raised']);
  // Both waited in intake too long: both are signed again (the escalation was never admitted).
  b.sequence({ 'timeout.recorded': STALE, 'escalation.raised': STALE });
  observe();
  await timer.tick(late + 1_000);
  assert.deepEqual(typesOf(b.intake(sent + 2)), ['timeout.recorded', 'escalation.raised']);
  assert.deepEqual(timer.rejections, { signed_again: 1, abandoned: 0, moot: 0 });
  // Rejected again, but meanwhile another timer's timeout of that request was sequenced: nothing left to sign.
  b.sequencer.say('timeout.recorded', (b.intake(sent)[0] as Envelope).statement.body as BodyOf<'timeout.recorded'>, timerKey);
  b.sequence({ 'timeout.recorded': STALE });
  observe();
  await timer.tick(late + 2_000);
  assert.equal(b.intake().length, sent + 4, 'nothing signed');
  assert.deepEqual(timer.rejections, { signed_again: 1, abandoned: 0, moot: 1 });
  await gate.stop();
});
