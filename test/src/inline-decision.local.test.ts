import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { awaitStatement } from '@agent-ledger/client';
import { statementHash, type Entry, type Envelope } from '@agent-ledger/core';
import type { LogBus, OutRecord, TransactionalWriter } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { entryLocation, exportCommand, openEmbeddedStorage, serve, topicNames, type LedgerHome, type RunningLedger, type ServeRole } from '@agent-ledger/ledger';
import { devReader, freshDevHome } from './dev-mode.js';
import { clientFor, eventually, proposal } from './live.js';

// With the sequencer and the gate in one process, a proposal the gate can
// settle alone (no pre-screen) gets its first decision, signed by the gate,
// chained right after it in the transaction that admits it; the gate worker
// neither decides it again nor counts it twice. LEDGER_INLINE_DECISIONS=off,
// or a sequencer without the gate beside it, leaves every proposal to the
// gate worker as before. Every export verifies unchanged.

process.env.LEDGER_LOG_LEVEL ??= 'warn';

const ALL: readonly ServeRole[] = ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'];
/** The header the sequencer puts on a proposal and the first decision it chained with it. */
const INLINE_HEADER = 'ledger-first-decision';

/** A destructive command: blocked by the rules, nothing to pre-screen. */
const destructive = (): ReturnType<typeof proposal> => proposal({ args: { command: 'rm -rf / --no-preserve-root' } });
/** A routine command below the threshold: the gate pre-screens it, so the gate worker decides it. */
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

const inlineTotal = (running: RunningLedger): number => running.sequencers.reduce((n, s) => n + s.counters.inlineDecisions, 0);

describe('first decisions chained with their proposal (sequencer and gate in one process)', { timeout: 300_000 }, () => {
  const flag = process.env.LEDGER_INLINE_DECISIONS;
  after(() => {
    if (flag === undefined) delete process.env.LEDGER_INLINE_DECISIONS;
    else process.env.LEDGER_INLINE_DECISIONS = flag;
  });

  test('a block the gate settles alone is chained right after its proposal, in one transaction, once; a pre-screened proposal is still the gate worker\'s; the export verifies', async () => {
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

      // The pre-screened proposal: decided by the gate worker through intake, as before.
      const worker = lifeOf(partitions, screenedHash);
      assert.equal(worker.proposal.headers[INLINE_HEADER], undefined);
      assert.equal(worker.decisions.length, 1);
      assert.equal(worker.decisions[0]?.headers[INLINE_HEADER], undefined);
      assert.ok((await gateIntakeAbout(home, screenedHash)).some((e) => e.statement.type === 'decision.recorded'));
      assert.ok(worker.after.some((e) => e.entry.envelope.statement.type === 'screening.verdict'));

      // Counted once each: one inline, both among the gate's first decisions.
      assert.equal(inlineTotal(running), 1);
      const gate = running.gate;
      assert.ok(gate !== undefined);
      await eventually(async () => (gate.counters.decisions === 2 ? true : undefined), 10_000, 'the gate counting both first decisions');
      assert.deepEqual([gate.counters.decisions, gate.counters.block, gate.counters.allow], [2, 1, screened.outcome === 'allow' ? 1 : 0]);

      await exportVerifies(home);
    } finally {
      await running.stop();
    }
  });

  test('LEDGER_INLINE_DECISIONS=off: the gate worker decides every proposal through intake, as before', async () => {
    process.env.LEDGER_INLINE_DECISIONS = 'off';
    const home = freshDevHome();
    const running = await startRecording(home, ALL, []);
    try {
      const blocked = await clientFor(home, running, 'agent-build-bot').proposeAndWait(destructive(), 30_000);
      assert.equal(blocked.outcome, 'block');
      const hash = (blocked.entry.envelope.statement.body as { proposal: string }).proposal;
      const life = lifeOf(await eventsOf(home), hash);
      assert.equal(life.proposal.headers[INLINE_HEADER], undefined);
      assert.equal(life.decisions.length, 1);
      assert.ok((await gateIntakeAbout(home, hash)).some((e) => e.statement.type === 'decision.recorded' && e.statement.id === blocked.entry.envelope.statement.id));
      assert.equal(inlineTotal(running), 0);
      await eventually(async () => (running.gate?.counters.block === 1 ? true : undefined), 10_000, 'the gate counting its block');
      assert.equal(running.gate?.counters.decisions, 1);
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
