import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createReadStream, mkdtempSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStatement, eventPartitionOf, nodeEd25519, signStatement, statementHash, type Entry, type Envelope } from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { entryLocation, exportCommand, initHome, topicNames, type LedgerHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { proposal } from './live.js';

// What the fault batteries share: role processes a test kills and a
// supervisor restarts, the tally of what the log holds for the acknowledged
// statements, and the offline verify-chain of the export.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');
/** Every role process still running (killed at exit). */
export const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A role process; `exits` collects every exit this test did not cause. */
export class Role {
  readonly name: string;
  readonly #home: LedgerHome;
  readonly #roles: string[];
  readonly #env: Record<string, string>;
  #child: ChildProcess | undefined;
  #killing = false;
  readonly exits: string[] = [];

  constructor(home: LedgerHome, roles: string[], name: string, env: Record<string, string> = {}) {
    this.#home = home;
    this.#roles = roles;
    this.name = name;
    this.#env = env;
  }

  start(): void {
    // The role writes its log straight to the file: a busy test process must not hold up a role that logs
    // synchronously (as the service does) through a full pipe. SIGUSR2 makes it write a diagnostic report (see diagnose).
    const log = openSync(join(this.#home.dir, `${this.name}.log`), 'a');
    const node = ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${this.#home.dir}`];
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [...node, bin, 'serve', '--home', this.#home.dir, '--target', ...this.#roles], { stdio: ['ignore', log, log], env: { ...process.env, ...this.#env } });
    } finally {
      closeSync(log);
    }
    children.add(child);
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (!this.#killing) {
        this.exits.push(`${this.name}: ${code ?? signal}`);
        // The supervisor's part: start it again.
        this.start();
      }
    });
    this.#child = child;
  }

  /**
   * What the running role is doing, from a Node diagnostic report (SIGUSR2):
   * its JavaScript stack at that moment (a role stuck in a loop shows where;
   * an idle one shows none) and its libuv handles by type. For a failed
   * battery: was the role alive, and waiting on what.
   */
  async diagnose(): Promise<string> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return `${this.name}: not running`;
    const before = new Set(readdirSync(this.#home.dir).filter((f) => f.startsWith('report.')));
    child.kill('SIGUSR2');
    for (let waited = 0; waited < 10_000; waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const made = readdirSync(this.#home.dir).find((f) => f.startsWith('report.') && f.endsWith('.json') && !before.has(f));
      if (made === undefined) continue;
      let report: { javascriptStack?: { message?: string; stack?: string[] }; libuv?: { type: string; is_active?: boolean }[]; resourceUsage?: { userCpuSeconds?: number; kernelCpuSeconds?: number } };
      try {
        report = JSON.parse(readFileSync(join(this.#home.dir, made), 'utf8')) as typeof report;
      } catch {
        continue; // still being written
      }
      const handles = new Map<string, number>();
      for (const h of report.libuv ?? []) if (h.is_active !== false) handles.set(h.type, (handles.get(h.type) ?? 0) + 1);
      const stack = (report.javascriptStack?.stack ?? []).slice(0, 12).join(' | ');
      const cpu = report.resourceUsage === undefined ? '' : `, CPU user ${report.resourceUsage.userCpuSeconds ?? '?'} s, system ${report.resourceUsage.kernelCpuSeconds ?? '?'} s`;
      return `${this.name}: alive; JavaScript stack when signalled: ${stack || 'none (idle, waiting on the event loop)'}; active handles ${JSON.stringify(Object.fromEntries(handles))}${cpu} (${join(this.#home.dir, made)})`;
    }
    return `${this.name}: no diagnostic report within 10 s (its event loop may be blocked)`;
  }

  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.#killing = true;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    this.#killing = false;
  }
}

export interface Tally {
  acknowledged: number;
  admittedOnce: number;
  decidedOnce: number;
  lost: number;
  duplicated: number;
  decidedTwice: number;
  undecided: number;
  roleExits: number;
  verifyChain: string;
}

export function line(name: string, t: Tally): string {
  return `# ${name}: acknowledged ${t.acknowledged}, admitted once ${t.admittedOnce}, decided once ${t.decidedOnce}, lost ${t.lost}, duplicated ${t.duplicated}, decided twice ${t.decidedTwice}, undecided ${t.undecided}, role exits ${t.roleExits}, verify-chain ${t.verifyChain}\n`;
}

export async function readAll(bus: LogBus, home: LedgerHome): Promise<Entry[]> {
  const topics = topicNames(home.config.topicPrefix);
  const entries: Entry[] = [];
  for (let p = 1; p <= home.config.eventPartitions; p++) {
    const { topic, partition } = entryLocation(topics, p);
    for await (const r of bus.readRange(topic, partition, '0')) entries.push(JSON.parse(r.value.toString('utf8')) as Entry);
  }
  return entries;
}

/** Counts, for the acknowledged statements (id -> proposal hash), what the log holds. */
export function count(entries: readonly Entry[], acknowledged: ReadonlyMap<string, string>): Omit<Tally, 'roleExits' | 'verifyChain'> {
  const admitted = new Map<string, number>();
  const decided = new Map<string, number>();
  for (const entry of entries) {
    const statement = entry.envelope.statement;
    if (acknowledged.has(statement.id)) admitted.set(statement.id, (admitted.get(statement.id) ?? 0) + 1);
    if (statement.type === 'decision.recorded') {
      const body = statement.body as { proposal: string; outcome: string };
      if (body.outcome !== 'verify_first') decided.set(body.proposal, (decided.get(body.proposal) ?? 0) + 1);
    }
  }
  let admittedOnce = 0;
  let lost = 0;
  let duplicated = 0;
  let decidedOnce = 0;
  let decidedTwice = 0;
  let undecided = 0;
  for (const [id, hash] of acknowledged) {
    const n = admitted.get(id) ?? 0;
    if (n === 0) lost += 1;
    else if (n === 1) admittedOnce += 1;
    else duplicated += 1;
    const d = decided.get(hash) ?? 0;
    if (d === 1) decidedOnce += 1;
    else if (d > 1) decidedTwice += 1;
    else if (n > 0) undecided += 1;
  }
  return { acknowledged: acknowledged.size, admittedOnce, decidedOnce, lost, duplicated, decidedTwice, undecided };
}

/** Waits until every acknowledged statement is admitted and decided (or the time is up), then exports and verifies. */
export async function settle(bus: LogBus, home: LedgerHome, acknowledged: ReadonlyMap<string, string>, roles: readonly Role[], timeoutMs: number): Promise<Tally> {
  const deadline = Date.now() + timeoutMs;
  let counts = count(await readAll(bus, home), acknowledged);
  while ((counts.admittedOnce + counts.duplicated < counts.acknowledged || counts.undecided > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counts = count(await readAll(bus, home).catch(() => []), acknowledged);
  }
  // Sealed checkpoints for the tail, then the offline check.
  await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
  const out = join(home.dir, 'export.ndjson');
  let verifyChain: string;
  if ((await exportCommand({ out, home: home.dir })) !== 0) verifyChain = 'export failed';
  else {
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    verifyChain = report.failure === null ? `passes (${report.entries} entries)` : `fails: ${report.failure.code} at ${report.failure.partition}/${report.failure.index}`;
  }
  return { ...counts, roleExits: roles.reduce((n, r) => n + r.exits.length, 0), verifyChain };
}

export function assertClean(t: Tally, what: string): void {
  assert.deepEqual(
    { lost: t.lost, duplicated: t.duplicated, decidedTwice: t.decidedTwice, undecided: t.undecided, roleExits: t.roleExits, decidedOnce: t.decidedOnce, verifies: t.verifyChain.startsWith('passes') },
    { lost: 0, duplicated: 0, decidedTwice: 0, undecided: 0, roleExits: 0, decidedOnce: t.acknowledged, verifies: true },
    `${what}: ${line(what, t)}`,
  );
}

export function newHome(options: { pgUrl?: string; apiPort?: number } = {}): LedgerHome {
  const id = randomBytes(4).toString('hex');
  return initHome(mkdtempSync(join(tmpdir(), 'ledger-battery-')), {
    origin: `ledger.test/${id}`,
    eventPartitions: 2,
    topicPrefix: `f${id}`,
    pgUrl: options.pgUrl ?? `postgres://postgres@127.0.0.1:5432/ledger_f${id}`,
    apiPort: options.apiPort ?? 0,
  });
}

export const routine = (n: number): ReturnType<typeof proposal> => proposal({ args: { command: `ls -la /srv/app/${n}` } });
export const email = (n: number): ReturnType<typeof proposal> =>
  proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: `ticket:${n}`, args: { to: 'customer@example.com', subject: `Your refund ${n}` }, query: 'tell the customer' });

/** Signs a proposal of `key` and publishes it to intake, retrying while the broker is away; acknowledged once the broker has it. */
export async function publish(bus: LogBus, home: LedgerHome, key: string, body: ReturnType<typeof proposal>, acknowledged: Map<string, string>): Promise<void> {
  const agent = home.key(key);
  const statement = createStatement('proposal.submitted', { ...body, agentId: agent.principal }, agent);
  const envelope: Envelope = signStatement(statement, [agent], nodeEd25519);
  const topics = topicNames(home.config.topicPrefix);
  const partition = eventPartitionOf(agent.principal, home.config.eventPartitions);
  for (let attempt = 0; ; attempt++) {
    try {
      await bus.publish([{ topic: topics.intake, partition, key: agent.principal, value: JSON.stringify(envelope) }]);
      acknowledged.set(statement.id, statementHash(statement));
      return;
    } catch (err) {
      if (attempt > 600) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

