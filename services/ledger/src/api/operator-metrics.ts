import type { SqlPool } from '@agent-ledger/store';
import { Counter, Gauge, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';
import { statementHash, type Entry } from '@agent-ledger/core';
import type { LogIndex } from './log-index.js';
import { measureSiemLag, type SiemLag, type SiemLagSource } from '../siem/siem-lag.js';

/** Buckets of the approval latency histogram, in seconds: a human answers in seconds to minutes. */
export const APPROVAL_LATENCY_BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600] as const;

/** Confirmation requests remembered while waiting for their answer (the oldest are dropped past this). */
const OPEN_REQUESTS = 100_000;

/** One partition's checkpoint health as the dashboard and `/metrics` report it. */
export interface CheckpointHealth {
  readonly partition: number;
  readonly entries: number;
  readonly checkpointSize: number;
  /** Seconds since the newest checkpoint was sealed; null before the first. */
  readonly ageSeconds: number | null;
}

/** The pending queue as the dashboard and `/metrics` report it. */
export interface PendingDepth {
  readonly pending: number;
  /** Seconds the oldest open request has waited; null when none waits. */
  readonly oldestSeconds: number | null;
}

/**
 * The operator's metrics (Prometheus naming: a unit suffix, `_total` on
 * counters only):
 *
 * - `ledger_pending_approvals` and `ledger_pending_approval_oldest_age_seconds`:
 *   open confirmation requests (projection, Postgres) and how long the oldest waited;
 * - `ledger_approval_latency_seconds{answer}`: from a `confirmation.requested`
 *   entry to the `human.response` (approve / deny) or `timeout.recorded`
 *   entry about it, by their `sequencedAt` (the log's own clock);
 * - `ledger_checkpoint_age_seconds{partition}` and
 *   `ledger_checkpoint_uncovered_entries{partition}`: how old the newest signed
 *   checkpoint is and how many entries follow it (an age that grows while
 *   entries wait uncovered means the sequencer stopped sealing);
 * - `ledger_siem_export_backlog_entries{partition}`: entries of a ledger
 *   partition the SIEM exporter has not consumed yet, at most (see
 *   `SiemPartitionLag` in `siem/siem-lag.ts`); absent while the log does not answer.
 */
export class OperatorMetrics {
  readonly latency: Histogram<'answer'>;
  /** Confirmation-fatigue signals on the log (SPEC.md: grant.suggested, approval.rushed). */
  readonly fatigue: Counter<'signal'>;
  readonly #pool: SqlPool;
  readonly #logIndex: LogIndex;
  /** Request statement hash -> its sequencedAt (Unix ms). */
  readonly #requested = new Map<string, number>();

  readonly #eventPartitions: number;
  readonly #siem: SiemLagSource | undefined;

  /**
   * `eventPartitions`: the installation's event partitions; every ledger
   * partition 0..N is reported, written to or not. `siem`: the log the SIEM
   * exporter's position is read from (its lag is unknown without it).
   */
  constructor(registry: Registry, pool: SqlPool, logIndex: LogIndex, eventPartitions = 0, siem?: SiemLagSource) {
    this.#eventPartitions = eventPartitions;
    this.#siem = siem;
    this.#pool = pool;
    this.#logIndex = logIndex;
    this.latency = new Histogram({
      name: 'ledger_approval_latency_seconds',
      help: 'Time from a confirmation request to its answer or timeout on the log, by answer (approve, deny, timeout)',
      labelNames: ['answer'],
      buckets: [...APPROVAL_LATENCY_BUCKETS],
      registers: [registry],
    });
    this.fatigue = new Counter({ name: 'ledger_fatigue_signals_total', help: 'Confirmation-fatigue signals on the log, by signal (grant.suggested, approval.rushed)', labelNames: ['signal'], registers: [registry] });
    const metrics = this;
    // One query serves both gauges of a scrape (the registry collects them concurrently).
    new Gauge({
      name: 'ledger_pending_approvals',
      help: 'Confirmation requests waiting for a human (open, before their deadline)',
      registers: [registry],
      async collect() {
        const depth = await metrics.#sharedDepth();
        if (depth === undefined) this.reset();
        else this.set(depth.pending);
      },
    });
    new Gauge({
      name: 'ledger_pending_approval_oldest_age_seconds',
      help: 'How long the oldest open confirmation request has waited (0 when none)',
      registers: [registry],
      async collect() {
        const depth = await metrics.#sharedDepth();
        if (depth === undefined) this.reset();
        else this.set(depth.oldestSeconds ?? 0);
      },
    });
    new Gauge({
      name: 'ledger_checkpoint_age_seconds',
      help: 'Seconds since the newest signed checkpoint of a ledger partition was sealed',
      labelNames: ['partition'],
      registers: [registry],
      collect() {
        for (const health of metrics.checkpointHealth()) if (health.ageSeconds !== null) this.set({ partition: String(health.partition) }, health.ageSeconds);
      },
    });
    new Gauge({
      name: 'ledger_checkpoint_uncovered_entries',
      help: 'Entries of a ledger partition after its newest signed checkpoint',
      labelNames: ['partition'],
      registers: [registry],
      collect() {
        for (const health of metrics.checkpointHealth()) this.set({ partition: String(health.partition) }, health.entries - health.checkpointSize);
      },
    });
    new Gauge({
      name: 'ledger_siem_export_backlog_entries',
      help: 'Entries of a ledger partition the SIEM exporter has not consumed yet, at most (log offsets past its committed position, the end commit marker excluded); absent when the log cannot be asked',
      labelNames: ['partition'],
      registers: [registry],
      async collect() {
        const lag = await metrics.siemLag();
        this.reset();
        if (lag.known) for (const p of lag.partitions) this.set({ partition: String(p.partition) }, p.behind);
      },
    });
  }

  #siemInFlight: Promise<SiemLag> | undefined;

  /** How far the SIEM exporter is behind, per ledger partition (one reading serves concurrent callers). */
  siemLag(): Promise<SiemLag> {
    const source = this.#siem;
    if (source === undefined) return Promise.resolve({ known: false, reason: 'this API does not read the log the SIEM exporter consumes' });
    this.#siemInFlight ??= measureSiemLag(source).finally(() => {
      this.#siemInFlight = undefined;
    });
    return this.#siemInFlight;
  }

  /** Observes an indexed entry: requests start a latency clock, answers and timeouts stop it. */
  observe(entry: Entry): void {
    const statement = entry.envelope.statement;
    const at = Date.parse(entry.sequencedAt);
    if (statement.type === 'confirmation.requested') {
      this.#requested.set(statementHash(statement), at);
      if (this.#requested.size > OPEN_REQUESTS) {
        const oldest = this.#requested.keys().next();
        if (oldest.done !== true) this.#requested.delete(oldest.value);
      }
      return;
    }
    if (statement.type === 'grant.suggested' || statement.type === 'approval.rushed') {
      this.fatigue.inc({ signal: statement.type });
      return;
    }
    if (statement.type !== 'human.response' && statement.type !== 'timeout.recorded') return;
    const body = statement.body as { request: string; answer?: 'approve' | 'deny' };
    const started = this.#requested.get(body.request);
    if (started === undefined) return;
    const answer = statement.type === 'timeout.recorded' ? 'timeout' : (body.answer ?? 'approve');
    // A request needing several approvals keeps its clock until its last answer: each answer is one sample.
    if (statement.type === 'timeout.recorded' || answer === 'deny') this.#requested.delete(body.request);
    this.latency.observe({ answer }, Math.max(0, at - started) / 1000);
  }

  #inFlight: Promise<PendingDepth | undefined> | undefined;

  /** The depth query of the scrape in progress; undefined when Postgres cannot answer (no value rather than a stale one). */
  #sharedDepth(): Promise<PendingDepth | undefined> {
    this.#inFlight ??= this.pendingDepth().then(
      (depth) => depth,
      () => undefined,
    ).finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /** The open confirmation requests and the oldest one's wait, from the projection. */
  async pendingDepth(): Promise<PendingDepth> {
    const result = await this.#pool.query(
      `SELECT count(*)::int AS pending, EXTRACT(EPOCH FROM (now() - min(e.sequenced_at)))::float8 AS oldest
         FROM pending_approvals p LEFT JOIN entries_seen e ON e.partition = p.partition AND e.index = p.index
        WHERE p.status = 'pending' AND p.deadline > now()`,
    );
    const row = result.rows[0] as { pending: number; oldest: number | null } | undefined;
    return { pending: row?.pending ?? 0, oldestSeconds: row?.oldest === null || row?.oldest === undefined ? null : Math.max(0, row.oldest) };
  }

  /** Every partition's entries, newest checkpoint and its age. */
  checkpointHealth(now = Date.now()): CheckpointHealth[] {
    const partitions = new Set([...Array.from({ length: this.#eventPartitions + 1 }, (_, p) => p), ...this.#logIndex.partitions()]);
    return [...partitions].sort((a, b) => a - b).map((partition) => {
      const sealedAt = this.#logIndex.latestSealedAt(partition);
      return {
        partition,
        entries: this.#logIndex.size(partition),
        checkpointSize: this.#logIndex.latestCheckpoint(partition)?.size ?? 0,
        ageSeconds: sealedAt === undefined ? null : Math.max(0, (now - sealedAt) / 1000),
      };
    });
  }
}

/** prom-client's default process metrics that are gauges named like counters (`promtool check metrics` refuses them). */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;

/**
 * prom-client's default process and Node.js metrics, without the three
 * gauges it names `*_total` (a `_total` suffix promises a counter: Prometheus's
 * linter refuses them, and rate() users would be misled). The same values are
 * exported by type as `nodejs_active_handles`, `nodejs_active_requests` and
 * `nodejs_active_resources`; their sum is the removed total.
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
}
