import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { awaitStatement } from '@agent-ledger/client';
import { statementHash, type BodyOf, type Entry, type Envelope } from '@agent-ledger/core';
import type { LogBus, OutRecord, TransactionalWriter } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerHome, entryLocation, exportCommand, openEmbeddedStorage, serve, topicNames, type RunningLedger, type ServeRole } from '@agent-ledger/ledger';
import { RulesScreener, screeningStatement } from '@agent-ledger/screen';
import { devReader, freshDevHome } from './dev-mode.js';
import { clientFor, eventually, proposal } from './live.js';

// With the sequencer and the gate in one process, a proposal the gate can
// settle alone (no pre-screen, or one by the deterministic rules screener)
// gets its first decision, signed by the gate, chained right after it in the
// transaction that admits it; the gate worker neither decides it again nor
// counts it twice. A screener that does I/O (an OpenAI-compatible endpoint),
// LEDGER_INLINE_DECISIONS=off, or a sequencer without the gate beside it,
// leaves the proposal to the gate worker as before. Every export verifies
// unchanged.

process.env.LEDGER_LOG_LEVEL ??= 'warn';

const ALL: readonly ServeRole[] = ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'];
/** The header the sequencer puts on a proposal and the first decision it chained with it. */
const INLINE_HEADER = 'ledger-first-decision';

/** A destructive command: blocked by the rules, nothing to pre-screen. */
const destructive = (): ReturnType<typeof proposal> => proposal({ args: { command: 'rm -rf / --no-preserve-root' } });
/** A routine command below the threshold: the gate pre-screens it. */
const routine = (): ReturnType<typeof proposal> => proposal({ args: { command: 'ls -la /srv/app' } });

/** The embedded log of `home`, with every committed transaction's records noted in `commits`. */
async function startRecording(home: LedgerHome, roles: readonly ServeRole[], commits: (readonly OutRecord[])[]): Promise<RunningLedger> {
  const storage = await openEmbeddedStorage(home);
  const bound = <T extends object>(target: T, name: string | symbol): unknown => {
    const value: unknown = Reflect.get(target, name, target);
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  };
  const bus = new Proxy(storage.bus, {
    get(target, name) {
      if (name !== 'writer') return bound(target, name);
      return async (id: string): Promise<TransactionalWriter> => {
        const writer = await target.writer(id);
        return new Proxy(writer, {
          get(w, n) {
            if (n !== 'commit') return bound(w, n);
            return async (records: readonly OutRecord[], consumed?: Parameters<TransactionalWriter['commit']>[1]): Promise<void> => {
              await w.commit(records, consumed);
              commits.push([...records]);
            };
          },
        });
      };
    },
  }) as LogBus;
  return serve(home, roles, { storage: { bus, pool: storage.pool } });
}

interface LoggedEntry {
  readonly entry: Entry;
  readonly hash: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly value: string;
}

/** Every entry of the events partitions, in log order per partition. */
async function eventsOf(home: LedgerHome): Promise<LoggedEntry[][]> {
  const topics = topicNames(home.config.topicPrefix);
  const reader = devReader(home);
  const partitions: LoggedEntry[][] = [];
  try {
    for (let p = 1; p <= home.config.eventPartitions; p++) {
      const { topic, partition } = entryLocation(topics, p);
      const entries: LoggedEntry[] = [];
      for await (const r of reader.readRange(topic, partition, '0')) {
        const entry = JSON.parse(r.value.toString()) as Entry;
        entries.push({ entry, hash: statementHash(entry.envelope.statement), headers: r.headers, value: r.value.toString() });
      }
      partitions.push(entries);
    }
  } finally {
    await reader.close();
  }
  return partitions;
}

/** The gate's statements on intake that name `proposal`. */
async function gateIntakeAbout(home: LedgerHome, proposalHash: string): Promise<Envelope[]> {
  const topics = topicNames(home.config.topicPrefix);
  const reader = devReader(home);
  const found: Envelope[] = [];
  try {
    for (let p = 1; p <= home.config.eventPartitions; p++) {
      for await (const r of reader.readRange(topics.intake, p, '0')) {
        const envelope = JSON.parse(r.value.toString()) as Envelope;
        if (envelope.statement.author.keyId === home.key('gate').keyId && (envelope.statement.body as { proposal?: string }).proposal === proposalHash) found.push(envelope);
      }
    }
  } finally {
    await reader.close();
  }
  return found;
}

/** The proposal's entry and what follows it on its partition. */
function lifeOf(partitions: LoggedEntry[][], proposalHash: string): { proposal: LoggedEntry; after: LoggedEntry[]; decisions: LoggedEntry[] } {
  for (const entries of partitions) {
    const at = entries.findIndex((e) => e.hash === proposalHash);
    if (at < 0) continue;
    const decisions = entries.filter((e) => e.entry.envelope.statement.type === 'decision.recorded' && (e.entry.envelope.statement.body as { proposal: string }).proposal === proposalHash);
    return { proposal: entries[at] as LoggedEntry, after: entries.slice(at + 1), decisions };
  }
  throw new Error(`proposal ${proposalHash.slice(0, 12)} is not on the log`);
}

async function exportVerifies(home: LedgerHome): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
  const out = join(home.dir, 'export.ndjson');
  assert.equal(await exportCommand({ out, home: home.dir }), 0);
  const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
  assert.equal(report.failure, null);
}

/**
 * The screening verdict on the log is the body the gate worker's path signs:
 * `screeningStatement` of the rules screener's asynchronous `screen()` on the
 * proposal and the classification the gate recorded (its rules are the
 * reasons the screener was handed: screening does not change them).
 */
async function assertWorkerVerdict(proposalEntry: LoggedEntry, verdict: LoggedEntry, classification: LoggedEntry): Promise<void> {
  const proposalBody = proposalEntry.entry.envelope.statement.body as BodyOf<'proposal.submitted'>;
  const cls = classification.entry.envelope.statement.body as BodyOf<'classification.recorded'>;
  const result = await new RulesScreener().screen({ proposal: proposalBody, proposalHash: proposalEntry.hash, tier: cls.tier, risk: cls.risk, rules: cls.rules });
  const expected = screeningStatement(result, proposalBody.agentId, proposalEntry.hash);
  assert.equal(JSON.stringify(verdict.entry.envelope.statement.body), JSON.stringify(expected));
  assert.equal((verdict.entry.envelope.statement.body as BodyOf<'screening.verdict'>).verdict, 'safe');
}

/** A stand-in OpenAI-compatible endpoint on 127.0.0.1 that answers every screening `safe`, counting the requests. */
async function stubScreenerEndpoint(): Promise<{ server: Server; baseUrl: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      const content = JSON.stringify({ verdict: 'safe', rationale: 'stub: routine listing' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://127.0.0.1:${port}/v1`, requests: () => requests };
}

const inlineTotal = (running: RunningLedger): number => running.sequencers.reduce((n, s) => n + s.counters.inlineDecisions, 0);

describe('first decisions chained with their proposal (sequencer and gate in one process)', { timeout: 300_000 }, () => {
  const flag = process.env.LEDGER_INLINE_DECISIONS;
  after(() => {
    if (flag === undefined) delete process.env.LEDGER_INLINE_DECISIONS;
    else process.env.LEDGER_INLINE_DECISIONS = flag;
  });

  test('a block the gate settles alone, and a routine call with the rules screener\'s verdict, are chained right after their proposals, in one transaction, once; the export verifies', async () => {
    delete process.env.LEDGER_INLINE_DECISIONS;
    const home = freshDevHome();
    const commits: (readonly OutRecord[])[] = [];
    const running = await startRecording(home, ALL, commits);
    try {
      const client = clientFor(home, running, 'agent-build-bot');
      const blocked = await client.proposeAndWait(destructive(), 30_000);
      assert.equal(blocked.outcome, 'block');
      const blockedHash = (blocked.entry.envelope.statement.body as { proposal: string }).proposal;
      const screened = await client.proposeAndWait(routine(), 30_000);
      const screenedHash = (screened.entry.envelope.statement.body as { proposal: string }).proposal;

      const partitions = await eventsOf(home);
      // The inline decision: classification, decision, refusal right after the proposal, all marked, one decision in all.
      const inline = lifeOf(partitions, blockedHash);
      assert.equal(inline.proposal.headers[INLINE_HEADER], 'inline');
      assert.deepEqual(inline.after.slice(0, 3).map((e) => e.entry.envelope.statement.type), ['classification.recorded', 'decision.recorded', 'refusal.recorded']);
      assert.ok(inline.after.slice(0, 3).every((e) => e.headers[INLINE_HEADER] === 'inline' && e.entry.envelope.statement.author.keyId === home.key('gate').keyId));
      assert.equal(inline.decisions.length, 1, 'exactly one first decision');
      assert.equal(inline.decisions[0]?.entry.index, inline.proposal.entry.index + 2);
      assert.equal(inline.decisions[0]?.entry.envelope.statement.id, blocked.entry.envelope.statement.id, 'the client got the inline decision');
      // One transaction carried the proposal entry and its decision entry.
      const decisionValue = inline.decisions[0]?.value;
      assert.ok(commits.some((records) => records.some((r) => String(r.value) === inline.proposal.value) && records.some((r) => String(r.value) === decisionValue)), 'proposal and decision committed together');
      // The gate worker published nothing about it.
      assert.deepEqual(await gateIntakeAbout(home, blockedHash), []);

      // The routine call: the rules screener's verdict, the classification and the allow, right after it, in its transaction.
      assert.equal(screened.outcome, 'allow');
      const routineLife = lifeOf(partitions, screenedHash);
      assert.equal(routineLife.proposal.headers[INLINE_HEADER], 'inline');
      const chained = routineLife.after.slice(0, 3);
      assert.deepEqual(chained.map((e) => e.entry.envelope.statement.type), ['screening.verdict', 'classification.recorded', 'decision.recorded']);
      assert.ok(chained.every((e) => e.headers[INLINE_HEADER] === 'inline' && e.entry.envelope.statement.author.keyId === home.key('gate').keyId));
      assert.equal(routineLife.decisions.length, 1, 'exactly one first decision');
      assert.equal(routineLife.decisions[0]?.entry.envelope.statement.id, screened.entry.envelope.statement.id, 'the client got the inline decision');
      const verdicts = partitions.flat().filter((e) => e.entry.envelope.statement.type === 'screening.verdict' && (e.entry.envelope.statement.body as { proposal: string }).proposal === screenedHash);
      assert.equal(verdicts.length, 1, 'exactly one screening verdict');
      assert.ok(commits.some((records) => [routineLife.proposal.value, ...chained.map((e) => e.value)].every((value) => records.some((r) => String(r.value) === value))), 'proposal, verdict and decision committed together');
      assert.deepEqual(await gateIntakeAbout(home, screenedHash), []);
      // The verdict's body is what the gate worker's asynchronous screen() would have had signed, byte for byte.
      await assertWorkerVerdict(routineLife.proposal, chained[0] as LoggedEntry, chained[1] as LoggedEntry);

      // Counted once each: both inline, both among the gate's first decisions.
      assert.equal(inlineTotal(running), 2);
      const gate = running.gate;
      assert.ok(gate !== undefined);
      await eventually(async () => (gate.counters.decisions === 2 ? true : undefined), 10_000, 'the gate counting both first decisions');
      assert.deepEqual([gate.counters.decisions, gate.counters.block, gate.counters.allow], [2, 1, 1]);

      await exportVerifies(home);
    } finally {
      await running.stop();
    }
  });

  test('with an OpenAI-compatible screener (network I/O), a routine call is screened and decided by the gate worker through intake; a block is still inline', async () => {
    delete process.env.LEDGER_INLINE_DECISIONS;
    const stub = await stubScreenerEndpoint();
    const created = freshDevHome();
    const configFile = join(created.dir, 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(configFile, `${JSON.stringify({ ...config, screener: { kind: 'openai-compatible', baseUrl: stub.baseUrl, model: 'stub-model', timeoutMs: 5_000 } }, null, 2)}\n`);
    const home = LedgerHome.open(created.dir);
    const running = await startRecording(home, ALL, []);
    try {
      const client = clientFor(home, running, 'agent-build-bot');
      const blocked = await client.proposeAndWait(destructive(), 30_000);
      assert.equal(blocked.outcome, 'block');
      const screened = await client.proposeAndWait(routine(), 30_000);
      assert.equal(screened.outcome, 'allow');
      const hash = (screened.entry.envelope.statement.body as { proposal: string }).proposal;
      assert.equal(stub.requests(), 1, 'the endpoint was asked once');
      const partitions = await eventsOf(home);
      assert.equal(lifeOf(partitions, (blocked.entry.envelope.statement.body as { proposal: string }).proposal).proposal.headers[INLINE_HEADER], 'inline');
      const life = lifeOf(partitions, hash);
      assert.equal(life.proposal.headers[INLINE_HEADER], undefined);
      assert.equal(life.decisions.length, 1);
      assert.equal(life.decisions[0]?.headers[INLINE_HEADER], undefined);
      const fromGate = await gateIntakeAbout(home, hash);
      assert.ok(fromGate.some((e) => e.statement.type === 'decision.recorded' && e.statement.id === screened.entry.envelope.statement.id));
      const verdicts = life.after.filter((e) => e.entry.envelope.statement.type === 'screening.verdict');
      assert.equal(verdicts.length, 1);
      assert.equal((verdicts[0]?.entry.envelope.statement.body as BodyOf<'screening.verdict'> | undefined)?.model, 'stub-model');
      assert.ok(fromGate.some((e) => e.statement.type === 'screening.verdict'));
      assert.equal(inlineTotal(running), 1);
      await eventually(async () => (running.gate?.counters.decisions === 2 ? true : undefined), 10_000, 'the gate counting both first decisions');
      await exportVerifies(home);
    } finally {
      await running.stop();
      await new Promise((resolve) => stub.server.close(resolve));
    }
  });

  test('LEDGER_INLINE_DECISIONS=off: the gate worker decides every proposal through intake, as before', async () => {
    process.env.LEDGER_INLINE_DECISIONS = 'off';
    const home = freshDevHome();
    const running = await startRecording(home, ALL, []);
    try {
      const client = clientFor(home, running, 'agent-build-bot');
      const blocked = await client.proposeAndWait(destructive(), 30_000);
      assert.equal(blocked.outcome, 'block');
      const screened = await client.proposeAndWait(routine(), 30_000);
      assert.equal(screened.outcome, 'allow');
      const partitions = await eventsOf(home);
      for (const decided of [blocked, screened]) {
        const hash = (decided.entry.envelope.statement.body as { proposal: string }).proposal;
        const life = lifeOf(partitions, hash);
        assert.equal(life.proposal.headers[INLINE_HEADER], undefined);
        assert.equal(life.decisions.length, 1);
        assert.ok((await gateIntakeAbout(home, hash)).some((e) => e.statement.type === 'decision.recorded' && e.statement.id === decided.entry.envelope.statement.id));
      }
      // The worker's verdict on the routine call: the same body the inline path signs.
      const routineLife = lifeOf(partitions, (screened.entry.envelope.statement.body as { proposal: string }).proposal);
      const verdict = routineLife.after.find((e) => e.entry.envelope.statement.type === 'screening.verdict');
      const classification = routineLife.after.find((e) => e.entry.envelope.statement.type === 'classification.recorded');
      assert.ok(verdict !== undefined && classification !== undefined);
      await assertWorkerVerdict(routineLife.proposal, verdict, classification);
      assert.equal(inlineTotal(running), 0);
      await eventually(async () => (running.gate?.counters.decisions === 2 ? true : undefined), 10_000, 'the gate counting its decisions');
      assert.deepEqual([running.gate?.counters.block, running.gate?.counters.allow], [1, 1]);
      await exportVerifies(home);
    } finally {
      await running.stop();
      delete process.env.LEDGER_INLINE_DECISIONS;
    }
  });

  test('a sequencer without the gate beside it admits the proposal alone; the gate started later decides it through intake', async () => {
    delete process.env.LEDGER_INLINE_DECISIONS;
    const home = freshDevHome();
    let running = await startRecording(home, ['api', 'sequencer', 'projector'], []);
    let hash: string;
    try {
      const submitted = await clientFor(home, running, 'agent-build-bot').propose(destructive());
      hash = submitted.statementHash;
      const admitted = await awaitStatement(running.apiUrl ?? '', submitted.id, 30_000, { signer: home.key('admin-alice') });
      assert.equal(admitted.status, 'admitted');
      assert.equal(inlineTotal(running), 0);
      const life = lifeOf(await eventsOf(home), hash);
      assert.equal(life.proposal.headers[INLINE_HEADER], undefined);
      assert.equal(life.decisions.length, 0);
    } finally {
      await running.stop();
    }
    running = await startRecording(home, ALL, []);
    try {
      const decision = await clientFor(home, running, 'agent-build-bot').awaitDecision(hash, 30_000);
      assert.equal(decision.outcome, 'block');
      const life = lifeOf(await eventsOf(home), hash);
      assert.equal(life.decisions.length, 1);
      assert.ok((await gateIntakeAbout(home, hash)).some((e) => e.statement.id === decision.entry.envelope.statement.id));
      await exportVerifies(home);
    } finally {
      await running.stop();
    }
  });
});
