import { existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Registry, Counter, Gauge } from 'prom-client';
import { collectProcessMetrics } from './api/operator-metrics.js';
import { type LogBus, WriterFencedError } from '@agent-ledger/kafka';
import { kafkaBusFor, topicDurability } from './kafka-client.js';
import { createPool, ensureDatabase, isPostgresUnavailable, migrate, type SqlPool } from '@agent-ledger/store';
import { AuthorityHistory } from '@agent-ledger/rulebook';
import { AuthorityFollower } from './authority-follower.js';
import { buildApi, DEFAULT_RATE_LIMIT, DEFAULT_REFUSAL_RECORD_LIMIT } from './api/server.js';
import { installationOf } from '@agent-ledger/client';
import { rateSettingsFrom, type RateSettings } from './api/rate-limit.js';
import { DependencyWatch, retrying } from './dependency-watch.js';
import { LogIndex } from './api/log-index.js';
import { DEFAULT_DEADLINES_MS, GateWorker, type GateDecider } from './gate/gate-worker.js';
import { evolve, initialState, type GateState } from '@agent-ledger/gate';
import { DeadlineTimer } from './gate/timer.js';
import type { RejectionCounters } from './gate/rejection-watch.js';
import { fatigueSettingsFromEnv } from './gate/fatigue.js';
import { apiTls, type HomeConfig, type LedgerHome } from './home.js';
import type { ReadAuthMode } from './api/read-auth.js';
import { Projector } from './projector/projector.js';
import { PartitionSequencer } from './sequencer/partition-sequencer.js';
import { SignaturePool } from './sequencer/signature-pool.js';
import { inlineDecisionsFrom } from './sequencer/inline-decision.js';
import { SiemExporter } from './siem/siem-exporter.js';
import { NotifierRole } from './notify/notifier-role.js';
import { startConfiguredChannels } from './notify/configured-channels.js';
import { OpenAICompatibleScreener, RulesScreener, type Screener } from '@agent-ledger/screen';
import { topicNames, topicSpecs } from './topics.js';
import { lineLogger, loggerFor } from './logging.js';

/** Roles one `ledger serve` process can run. */
export const ROLES = ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem', 'notify'] as const;
/** A role. */
export type ServeRole = (typeof ROLES)[number];

/** A running ledger process: its parts and how to stop them. */
export interface RunningLedger {
  readonly bus: LogBus;
  readonly pool: SqlPool;
  readonly sequencers: PartitionSequencer[];
  readonly follower: AuthorityFollower;
  readonly gate: GateWorker | undefined;
  readonly projector: Projector | undefined;
  readonly apiUrl: string | undefined;
  /** The API's log index, when the api role runs here. */
  readonly logIndex: LogIndex | undefined;
  /** The notify role (chat approval channels), when it runs here. */
  readonly notifier: NotifierRole | undefined;
  /** URL receivers POST signed webhook answers to, when the notify role listens for them. */
  readonly webhookCallbackUrl: string | undefined;
  /** Resolves when a role hit an error it cannot continue after (a fenced sequencer); the process should stop. */
  readonly fatal: Promise<Error>;
  stop(): Promise<void>;
}

/**
 * Confirmation deadlines by tier from LEDGER_DEADLINES_MS (e.g. `2:6000,3:3000,4:1000`),
 * for demos and tests that cannot wait a minute; the defaults are 60 / 30 / 10 s.
 */
function deadlineSettings(): { deadlinesMs?: Record<number, number> } {
  const text = process.env.LEDGER_DEADLINES_MS;
  if (text === undefined || text === '') return {};
  const deadlinesMs: Record<number, number> = { ...DEFAULT_DEADLINES_MS };
  for (const pair of text.split(',')) {
    const m = /^([0-4]):(\d{1,7})$/.exec(pair.trim());
    if (m === null) throw new Error(`LEDGER_DEADLINES_MS: bad pair ${pair}`);
    deadlinesMs[Number(m[1])] = Number(m[2]);
  }
  return { deadlinesMs };
}

/** The pure gate (packages/gate) as the worker's Decider. */
const gateDecider: GateDecider<GateState> = { initialState, evolve };

/**
 * Waits until every topic's partitions have a leader: topics created a moment
 * ago answer "not the leader" until the controller has elected one.
 */
async function leadersElected(bus: LogBus, names: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      try {
        await bus.endOffsets(name);
        break;
      } catch (err) {
        if (Date.now() > deadline || !(err instanceof LedgerError || err instanceof OperationalError) || !err.retryable) throw err;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}

/** The gate's pre-screen from the configuration: the rules screener unless an OpenAI-compatible endpoint is set. */
function screenerOf(config: HomeConfig): Screener {
  const settings = config.screener;
  if (settings === undefined || settings.kind === 'rules') return new RulesScreener();
  const apiKey = settings.apiKeyEnv === undefined ? undefined : process.env[settings.apiKeyEnv];
  return new OpenAICompatibleScreener({ baseUrl: settings.baseUrl, model: settings.model, timeoutMs: settings.timeoutMs, ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }) });
}

/** Channels a confirmation request names: the pull channels (cli, web) and the configured chat channels. */
function confirmationChannels(config: HomeConfig): ('cli' | 'web' | 'telegram' | 'discord' | 'webhook')[] {
  const chat = (['telegram', 'discord', 'webhook'] as const).filter((name) => config.channels?.[name] !== undefined);
  return ['cli', 'web', ...chat];
}

/**
 * The API's Host allow-list, rate limits and backlog bound: from the
 * installation config's `api` section, each overridden by its environment
 * variable when that is set. A bad value is BAD_CONFIGURATION at start.
 */
export function apiEdgeSettings(config: HomeConfig, env: NodeJS.ProcessEnv = process.env): { allowedHosts: readonly string[]; rateLimit: RateSettings; refusalRecordLimit: RateSettings; maxBacklogMs?: number; readAuth: ReadAuthMode; metricsToken?: string; tls?: { cert: Buffer; key: Buffer } } {
  const hostsText = env.LEDGER_API_HOSTS;
  const backlogText = env.LEDGER_API_MAX_BACKLOG_MS;
  let maxBacklogMs = config.api?.maxBacklogMs;
  if (backlogText !== undefined && backlogText !== '') {
    maxBacklogMs = Number(backlogText);
    if (!Number.isSafeInteger(maxBacklogMs) || maxBacklogMs < 100) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `LEDGER_API_MAX_BACKLOG_MS: expected whole milliseconds >= 100, got ${backlogText}`);
  }
  const rate = (name: string, configured: RateSettings | undefined, fallback: RateSettings): RateSettings => {
    try {
      return rateSettingsFrom(env[name], configured ?? fallback, name);
    } catch (err) {
      throw new OperationalError(OperationalCode.BAD_CONFIGURATION, (err as Error).message);
    }
  };
  return {
    allowedHosts: hostsText !== undefined && hostsText !== '' ? hostsText.split(',') : (config.api?.hosts ?? []),
    rateLimit: rate('LEDGER_API_RATE_LIMIT', config.api?.rateLimit, DEFAULT_RATE_LIMIT),
    refusalRecordLimit: rate('LEDGER_API_REFUSAL_RECORD_LIMIT', config.api?.refusalRecordLimit, DEFAULT_REFUSAL_RECORD_LIMIT),
    ...(maxBacklogMs === undefined ? {} : { maxBacklogMs }),
    readAuth: config.api?.readAuth ?? 'signed',
    ...(config.api?.metricsTokenFile === undefined ? {} : { metricsToken: readSecretFile(config.api.metricsTokenFile, 'api.metricsTokenFile').trim() }),
    ...tlsFiles(config, env),
  };
}

/** The address the API listens on: LEDGER_API_BIND, else `api.bind`, else 127.0.0.1. */
export function apiBind(config: HomeConfig, env: NodeJS.ProcessEnv = process.env): string {
  return env.LEDGER_API_BIND || config.api?.bind || '127.0.0.1';
}

function tlsFiles(config: HomeConfig, env: NodeJS.ProcessEnv): { tls?: { cert: Buffer; key: Buffer } } {
  const files = apiTls(config, env);
  if (files === undefined) return {};
  return { tls: { cert: Buffer.from(readSecretFile(files.certFile, 'the API certificate')), key: Buffer.from(readSecretFile(files.keyFile, 'the API key')) } };
}

function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${what}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** The roles' log: JSON lines with a level (logging.ts). */
const log = lineLogger(loggerFor('ledger'));

/** A counter whose value a role keeps (read at scrape time): Prometheus names it `_total` and types it `counter`. */
function countedBy(registry: Registry, name: string, help: string, value: () => number): void {
  new Counter({ name, help, registers: [registry], collect() { this.reset(); this.inc(value()); } });
}

/**
 * Starts the chosen roles in this process. Everything the roles need is
 * created here (topics from deploy/topics.json, database and migrations),
 * and the genesis is submitted to intake if the authority log is empty.
 */
export async function serve(
  home: LedgerHome,
  roles: readonly ServeRole[],
  options: {
    sequencerPartitions?: readonly number[];
    /** The log and database to use instead of the configured Kafka and Postgres (`ledger dev`: embedded); `stop` closes them. */
    storage?: { readonly bus: LogBus; readonly pool: SqlPool };
  } = {},
): Promise<RunningLedger> {
  const config = home.config;
  const topics = topicNames(config.topicPrefix);
  if (options.storage === undefined && config.storage === 'embedded') {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${home.dir} keeps its log and database embedded: run it with ledger dev (or move it to Kafka and Postgres with ledger move-to-kafka)`);
  }
  const bus = options.storage?.bus ?? kafkaBusFor(home, `${topics.prefix}-${roles.join('-')}-${process.pid}`);
  // A broker or Postgres that is not up yet (both restarting with the host) is waited for, with back-off.
  await retrying('broker', log, async () => {
    // On Kafka the topics are replicated as deploy/topics.json says for the deployment; an existing topic that is less durable is refused (BAD_CONFIGURATION).
    const durability = options.storage === undefined ? (await topicDurability(bus, home)).durability : undefined;
    await bus.ensureTopics(topicSpecs(topics, config.eventPartitions, durability));
    await leadersElected(bus, [topics.intake, topics.authority, topics.events, topics.checkpoints]);
  });
  // A connection whose backend is terminated (pg_terminate_backend, a restart) fails its query and is dropped; never an unhandled 'error'.
  const usesPostgres = roles.includes('api') || roles.includes('projector');
  const pool = options.storage?.pool ?? createPool(config.pgUrl, { max: 10, onError: (err) => log(`postgres: connection lost: ${err.message}`) });
  try {
    // Only the API and the projector use Postgres: a sequencer, gate or timer process starts without waiting for it.
    if (usesPostgres) {
      await retrying('postgres', log, async () => {
        if (options.storage === undefined) await ensureDatabase(config.pgUrl);
        await migrate(pool);
      }, isPostgresUnavailable);
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    await bus.close();
    throw err;
  }

  const registry = new Registry();
  collectProcessMetrics(registry);
  const watch = new DependencyWatch(bus, usesPostgres ? pool : undefined, topics.intake, log);
  watch.start();
  watch.register(registry);
  const operationalErrors = new Counter({ name: 'ledger_role_operational_errors_total', help: 'Operational failures a role rode out (retried), by role and operational code', labelNames: ['role', 'code'], registers: [registry] });
  const rodeOut = (role: string) => (err: { code: string; message: string }, stopped: boolean): void => {
    operationalErrors.inc({ role, code: err.code });
    log(`${role}: ${stopped ? 'consumer stopped' : 'retrying after'}: ${err.code}: ${err.message}`);
  };
  const follower = new AuthorityFollower(bus, home.trustRoot, topics);
  const stops: (() => Promise<void>)[] = [];
  const sequencers: PartitionSequencer[] = [];
  /** The roles whose rejected statements are counted on /metrics (the feedback loop from the sequencer). */
  const rejectionSources: { role: string; counters: () => Readonly<RejectionCounters> }[] = [];
  let gate: GateWorker | undefined;
  let projector: Projector | undefined;
  let apiUrl: string | undefined;
  let apiIndex: LogIndex | undefined;
  let notifier: NotifierRole | undefined;
  let webhookCallbackUrl: string | undefined;
  const has = (role: ServeRole): boolean => roles.includes(role);
  let reportFatal: (err: Error) => void = () => undefined;
  const fatal = new Promise<Error>((resolve) => {
    reportFatal = resolve;
  });

  // Bootstrap: the genesis goes through intake like any statement (the sequencer checks it against the trust root).
  const ends = await bus.endOffsets(topics.authority);
  if ((ends.get(0) ?? '0') === '0' && has('sequencer')) {
    await bus.publish([{ topic: topics.intake, partition: 0, key: null, value: JSON.stringify(home.genesis()) }]);
    log('submitted genesis to intake');
  }

  // The gate folds every authority entry from genesis on: it listens before the follower starts.
  if (has('gate')) gate = new GateWorker(bus, follower, { gate: home.key('gate'), eventPartitions: config.eventPartitions, topics, ...deadlineSettings(), screener: screenerOf(config), channels: confirmationChannels(config), fatigue: fatigueSettingsFromEnv(), log }, gateDecider as GateDecider);
  // With the gate in this process, the sequencer chains the first decisions the gate settles alone in the
  // transaction that admits their proposals (LEDGER_INLINE_DECISIONS=off: the gate worker decides every one).
  const inlineDecisions = inlineDecisionsFrom(process.env.LEDGER_INLINE_DECISIONS);
  if (inlineDecisions === undefined) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `LEDGER_INLINE_DECISIONS: expected on or off, got ${process.env.LEDGER_INLINE_DECISIONS ?? ''}`);
  if (has('sequencer')) {
    const partitions = options.sequencerPartitions ?? Array.from({ length: config.eventPartitions + 1 }, (_, p) => p);
    // LEDGER_SIGNATURE_WORKERS=0 checks intake signatures inline on the event loop.
    const asked = Number(process.env.LEDGER_SIGNATURE_WORKERS ?? 'NaN');
    const workers = Number.isInteger(asked) && asked >= 0 && asked <= 16 ? asked : undefined;
    const signatures = workers === 0 ? undefined : new SignaturePool(workers);
    if (signatures !== undefined) stops.push(() => signatures.close());
    // Events partitions judge answers by the authority stream as verify-chain does: fold it from the follower, genesis on.
    const authorityHistory = partitions.some((p) => p !== 0) ? new AuthorityHistory() : undefined;
    if (authorityHistory !== undefined) follower.onEntry((entry, hash) => authorityHistory.add(entry.envelope.statement, entry.index, hash, Date.parse(entry.sequencedAt)));
    const settings = {
      trustRoot: home.trustRoot,
      eventPartitions: config.eventPartitions,
      sequencer: home.key('sequencer'),
      checkpointEvery: config.checkpointEvery,
      checkpointIntervalMs: config.checkpointIntervalMs,
      // One process holds every role (`ledger dev`): a decision's receipt is sealed with the batch that chains it.
      sealAnswers: options.storage !== undefined,
      topics,
      ...(signatures === undefined ? {} : { signatures }),
      ...(authorityHistory === undefined ? {} : { authorityHistory }),
      ...(gate !== undefined && inlineDecisions ? { firstDecisions: gate } : {}),
    };
    for (const p of partitions) sequencers.push(new PartitionSequencer(p, bus, settings, follower));
    // Every writer at once (each fences its predecessor), then partition 0 first: the others judge keys by the authority stream it writes.
    await Promise.all(sequencers.map((s) => s.open()));
    const authority = sequencers.find((s) => s.partition === 0);
    if (authority !== undefined) await authority.start();
  }
  await follower.start(topics.group(`follower-${process.pid}`));
  // Events partitions recover independently of each other: at once.
  await Promise.all(sequencers.filter((s) => s.partition !== 0).map((s) => s.start()));
  for (const s of sequencers) {
    const r = s.lastRecovery;
    if (r !== undefined) log(`sequencer ${s.partition}: recovered from ${r.from === 'checkpoint' ? 'its newest checkpoint' : 'the first entry'} (${s.size} entries; ${r.entriesRead} read in ${r.ms} ms)`);
  }
  if (sequencers.length > 0) {
    const byPartition = new Map(sequencers.map((s) => [s.partition, s]));
    // A group of this process's own, starting at the offsets the sequencer transactions committed: a
    // restarted sequencer takes its partitions at once, without waiting for its predecessor's session to expire.
    const subscription = await bus.subscribe({
      groupId: topics.group(`sequencer-member-${randomUUID().slice(0, 8)}`),
      topics: [topics.intake],
      fromBeginning: true,
      commitOffsets: false,
      positions: { offsetsOf: topics.group('sequencer'), partitions: sequencers.map((s) => s.partition) },
      onError: rodeOut('sequencer'),
      onBatch: async (batch) => {
        const sequencer = byPartition.get(batch.partition);
        if (sequencer === undefined) throw new Error(`no sequencer for intake partition ${batch.partition} in this process`);
        try {
          await sequencer.handleBatch(batch);
        } catch (err) {
          if (err instanceof WriterFencedError) {
            log(`sequencer ${batch.partition} fenced by a newer instance: stopping`);
            reportFatal(err);
          }
          throw err;
        }
      },
    });
    // Events judged before genesis is folded would all be refused: wait for it.
    await follower.waitFor(1, 120_000);
    // A step of a sequencer's serialised work that takes this long is logged (again every such period while it lasts);
    // a checkpoint that keeps failing (the broker down) is said when it first fails, then as often with a count, and once when it ticks again.
    const slowStepMs = 30_000;
    const saidAt = new Map<string, number>();
    const mayLog = (what: string): boolean => {
      if (Date.now() - (saidAt.get(what) ?? 0) < slowStepMs) return false;
      saidAt.set(what, Date.now());
      return true;
    };
    const failedTicks = new Map<number, number>();
    const ticker = setInterval(() => {
      for (const s of sequencers) {
        const busy = s.busy(slowStepMs);
        if (busy !== undefined && mayLog(`slow:${s.partition}`)) log(`sequencer ${s.partition}: ${busy.step} for ${Math.round(busy.forMs / 1000)} s`);
        void s.tick().then(
          () => {
            const failed = failedTicks.get(s.partition);
            if (failed === undefined) return;
            failedTicks.delete(s.partition);
            saidAt.delete(`checkpoint:${s.partition}`);
            log(`checkpoint on ${s.partition}: ticking again after ${failed} failed ticks`);
          },
          (err: unknown) => {
            if (err instanceof WriterFencedError) {
              log(`sequencer ${s.partition} fenced by a newer instance: stopping`);
              reportFatal(err);
              return;
            }
            operationalErrors.inc({ role: 'sequencer', code: (err as { code?: string }).code ?? 'INTERNAL' });
            const failed = (failedTicks.get(s.partition) ?? 0) + 1;
            failedTicks.set(s.partition, failed);
            if (mayLog(`checkpoint:${s.partition}`)) log(`checkpoint on ${s.partition} failed (${failed} failed ticks in a row; retried every tick): ${(err as Error).message}`);
          },
        );
      }
    }, Math.max(50, Math.floor(config.checkpointIntervalMs / 2)));
    stops.push(async () => {
      clearInterval(ticker);
      await subscription.stop();
      for (const s of sequencers) await s.stop();
    });
    new Gauge({ name: 'ledger_sequencer_entries', help: 'Entries per ledger partition written by this process', labelNames: ['partition'], registers: [registry], collect() { for (const s of sequencers) this.set({ partition: String(s.partition) }, s.size); } });
    countedBy(registry, 'ledger_sequencer_rejected_total', 'Intake records rejected (recorded as intake.rejected)', () => sequencers.reduce((n, s) => n + s.counters.rejected, 0));
    countedBy(registry, 'ledger_sequencer_inline_decisions_total', 'Proposals whose first decision (signed by the gate in this process) was chained in the transaction that admitted them', () => sequencers.reduce((n, s) => n + s.counters.inlineDecisions, 0));
  }
  if (gate !== undefined) {
    await gate.start();
    const g = gate;
    for (const [kp, c] of g.catchUp) log(`gate: events partition ${kp} caught up from offset ${c.from} (${c.read} entries read; ${c.recalled} signed groups recalled from intake)`);
    stops.push(() => g.stop());
    countedBy(registry, 'ledger_grant_suggestions_total', 'grant.suggested statements signed by this gate (identical approvals an admin may turn into a grant)', () => g.counters.grantSuggestions);
    new Counter({ name: 'ledger_rubber_stamp_total', help: 'approval.rushed statements signed by this gate: approvals sequenced faster than the operation can be read', labelNames: ['approver'], registers: [registry], collect() { this.reset(); for (const [approver, n] of g.rubberStamps) this.inc({ approver }, n); } });
    // Liveness: admitted proposals with no final decision 30 s after it was due (should stay 0).
    new Gauge({ name: 'ledger_overdue_proposals', help: 'Admitted proposals without a final decision 30 s past their due time (first decision: at once; final: the request deadline)', registers: [registry], collect() { this.set(g.overdueProposals()); } });
    rejectionSources.push({ role: 'gate', counters: () => g.rejections });
    countedBy(registry, 'ledger_gate_commit_failures_total', 'Gate batches that failed (a commit, the pre-screen or the authority stream): the batch is redelivered and what it did not commit is decided again', () => g.counters.commitFailures);
  }
  if (has('timer')) {
    const timer = new DeadlineTimer(bus, home.key('timer'), topics, log);
    await timer.start(topics.group(`timer-${process.pid}`));
    stops.push(() => timer.stop());
    countedBy(registry, 'ledger_timer_tick_failures_total', 'Timer ticks whose publish failed (retried at the next tick)', () => timer.counters.tickFailures);
    rejectionSources.push({ role: 'timer', counters: () => timer.rejections });
  }
  if (rejectionSources.length > 0) {
    new Counter({
      name: 'ledger_rejected_signings_total',
      help: 'Decisions, confirmation requests (gate) and timeouts (timer) the sequencer rejected, by how they ended: signed_again, abandoned (given up: the proposal stays without them, see ledger_overdue_proposals and the log), moot (nothing left to sign by then)',
      labelNames: ['role', 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const { role, counters } of rejectionSources) for (const [outcome, n] of Object.entries(counters())) this.inc({ role, outcome }, n);
      },
    });
  }
  if (has('projector')) {
    projector = new Projector(bus, pool, config.eventPartitions, topics);
    await projector.start();
    const p = projector;
    stops.push(() => p.stop());
    new Gauge({ name: 'ledger_projection_halted', help: 'Projection partitions halted on INTEGRITY_FAILURE', registers: [registry], collect() { this.set(p.halted.size); } });
  }
  if (has('siem')) {
    const siem = new SiemExporter(bus, topics);
    await siem.start();
    stops.push(() => siem.stop());
  }
  if (has('notify') && !existsSync(home.keyPath('bridge-chat'))) {
    // An installation made before chat approvals has no bridge principal in its genesis.
    log('notify: no chat bridge key (keys/bridge-chat.key; this installation predates chat approvals, re-create it with ledger init --force): notify role not started');
  } else if (has('notify')) {
    const configured = await startConfiguredChannels(config.channels, log);
    webhookCallbackUrl = configured.webhookCallbackUrl;
    if (configured.channels.length === 0) log('notify: no chat channels configured: approvals come via the CLI (ledger approve) and the web page only');
    const n = new NotifierRole(bus, { bridge: home.key('bridge-chat'), topics, eventPartitions: config.eventPartitions, channels: configured.channels, ...(config.channels?.order === undefined ? {} : { order: config.channels.order }), ...(config.channels?.escalation === undefined ? {} : { escalation: config.channels.escalation }), log });
    await n.start(topics.group('notify')).catch(async (err: unknown) => {
      await configured.close();
      throw err;
    });
    notifier = n;
    stops.push(async () => {
      await n.stop();
      await configured.close();
    });
  }
  if (has('api')) {
    // Starts from the projection's verified heads (Postgres), then follows the log from the offsets stored with them.
    const logIndex = new LogIndex(bus, topics, { pool });
    await logIndex.start(topics.group(`api-${process.pid}`));
    apiIndex = logIndex;
    const indexStart = logIndex.started;
    if (indexStart !== undefined) log(`api: log index started from the ${indexStart.from} (${[...indexStart.loaded].map(([p, n]) => `${p}:${n}`).join(' ') || 'nothing'} entries loaded) in ${indexStart.ms} ms`);
    const edge = apiEdgeSettings(config);
    const api = await buildApi({
      bus,
      pool,
      pgUrl: config.pgUrl,
      dependencies: () => watch.status(),
      ...edge,
      log,
      follower,
      logIndex,
      eventPartitions: config.eventPartitions,
      origin: config.origin,
      rootKeys: home.trustRoot.rootKeys,
      installation: installationOf(home.genesis()),
      topics,
      registry,
      health: async () => {
        const halted = projector === undefined ? [] : [...projector.halted.entries()].map(([partition, message]) => ({ partition, code: 'INTEGRITY_FAILURE', message }));
        return { ok: halted.length === 0, detail: { halted, roles, overdueProposals: gate?.overdueProposals() ?? null } };
      },
      readyDetail: () => ({ overdueProposals: gate?.overdueProposals() ?? null }),
    });
    const bind = apiBind(config);
    const listening = await api.app.listen({ host: bind, port: config.apiPort });
    // The URL local clients use: the loopback name of the port (a wildcard bind answers there too).
    const port = new URL(listening).port;
    apiUrl = bind === '127.0.0.1' || bind === '0.0.0.0' || bind === '::' ? `${api.tls ? 'https' : 'http'}://127.0.0.1:${port}` : listening;
    log(`api listening on ${listening} (${api.tls ? 'TLS' : 'plain http'}, reads ${edge.readAuth === 'open' ? 'OPEN to anyone who reaches the port' : 'signed'})`);
    stops.push(() => api.close().then(() => logIndex.stop()));
  }

  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> => {
    stopping ??= (async () => {
      for (const stop of stops.reverse()) await stop().catch((err: unknown) => log(`stop: ${(err as Error).message}`));
      watch.stop();
      await follower.stop();
      await bus.close();
      await pool.end();
    })();
    return stopping;
  };
  log(`serving roles: ${roles.join(', ')}`);
  return { bus, pool, sequencers, follower, gate, projector, apiUrl, logIndex: apiIndex, notifier, webhookCallbackUrl, fatal, stop: stopAll };
}
