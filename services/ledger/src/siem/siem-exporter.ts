import type { ReasonCode } from '@agent-ledger/refusals';
import type { BodyOf, Entry } from '@agent-ledger/core';
import { ChunkedCommitter, type InBatch, type LogBus, type OutRecord, type Subscription, type TransactionalWriter } from '@agent-ledger/kafka';
import { parseEntry } from '../gate/gate-worker.js';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';

/** OCSF severity by refusal code: silence is low, denials medium, dangerous actions high, tampering critical. */
const SEVERITY: Partial<Record<ReasonCode, [number, string]>> = {
  TIMEOUT: [2, 'Low'],
  NO_CHANNEL: [2, 'Low'],
  RATE_LIMIT: [2, 'Low'],
  HUMAN_DENIED: [3, 'Medium'],
  STALE_APPROVAL: [3, 'Medium'],
  GRANT_MISSING: [3, 'Medium'],
  GRANT_EXPIRED: [3, 'Medium'],
  GRANT_MISMATCH: [3, 'Medium'],
  LOOP_DETECTED: [3, 'Medium'],
  GRANT_BLOCKED: [4, 'High'],
  RCE_RISK: [4, 'High'],
  CONTEXT_INJECTION: [4, 'High'],
  POLICY_VIOLATION: [4, 'High'],
  UNVERIFIED_TOOL: [4, 'High'],
  INVALID_SIGNATURE: [4, 'High'],
  KEY_REVOKED: [4, 'High'],
  REPLAY: [4, 'High'],
  INTEGRITY_FAILURE: [5, 'Critical'],
};

/**
 * The SIEM record of a refusal: fields shaped after OCSF 1.1 API Activity
 * (class 6003) with disposition Blocked, plus the signed refusal statement
 * itself and its ledger position, so a SIEM can alert on the fields and an
 * investigator can verify the statement.
 */
export function ocsfRecord(entry: Entry, code: ReasonCode, detail: string): Record<string, unknown> {
  const statement = entry.envelope.statement;
  const body = statement.body as { agentId?: string; proposal?: string; input?: string };
  const [severityId, severity] = SEVERITY[code] ?? [3, 'Medium'];
  return {
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: 6003,
    class_name: 'API Activity',
    activity_id: 99,
    activity_name: 'Refuse',
    type_uid: 600399,
    disposition_id: 2,
    disposition: 'Blocked',
    severity_id: severityId,
    severity,
    status_id: 2,
    status: 'Failure',
    status_code: code,
    status_detail: detail,
    time: Date.parse(entry.sequencedAt),
    actor: { user: { uid: body.agentId ?? 'unknown', type: 'AI agent' } },
    resources: [{ uid: body.proposal ?? body.input ?? '', type: body.proposal === undefined ? 'intake record' : 'tool-call proposal' }],
    metadata: { version: '1.1.0', product: { name: 'agent-ledger', vendor_name: 'agent-ledger' }, uid: statement.id, logged_time: Date.parse(entry.sequencedAt) },
    unmapped: { ledger_partition: entry.partition, ledger_index: entry.index, entry_hash: entry.hash, signed_by: statement.author },
    ledger: { entry },
  };
}

/**
 * Routes every refusal on the log to its code's topic (`ledger.refusals.<CODE>`),
 * so a SIEM subscribes to exactly the codes it alerts on. Refusals are
 * `refusal.recorded`, `intake.rejected` and `execution.refused` entries. Output and consumed
 * offsets commit in one Kafka transaction (exactly once).
 */
export class SiemExporter {
  readonly #bus: LogBus;
  readonly #topics: TopicNames;
  readonly #writers = new Map<string, TransactionalWriter>();
  readonly #committers = new Map<string, ChunkedCommitter>();
  #subscription: Subscription | undefined;
  readonly counters = { exported: 0 };

  constructor(bus: LogBus, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
  }

  async start(): Promise<void> {
    this.#subscription = await this.#bus.subscribe({
      groupId: this.#topics.group('siem'),
      topics: [this.#topics.authority, this.#topics.events],
      fromBeginning: true,
      commitOffsets: false,
      onBatch: (batch) => this.#handle(batch),
    });
  }

  async #handle(batch: InBatch): Promise<void> {
    const id = this.#topics.group(`siem-${ledgerPartitionOf(this.#topics, batch.topic, batch.partition)}`);
    let committer = this.#committers.get(id);
    if (committer === undefined) {
      const writer = await this.#bus.writer(id);
      this.#writers.set(id, writer);
      // A refusal storm is exported in transactions under the broker's limit, never one unbounded one.
      committer = new ChunkedCommitter(writer, { groupId: this.#topics.group('siem'), topic: batch.topic, partition: batch.partition });
      this.#committers.set(id, committer);
    }
    for (const record of committer.uncommitted(batch.records)) {
      const entry = parseEntry(record.value);
      const statement = entry.envelope.statement;
      const out: OutRecord[] = [];
      if (statement.type === 'refusal.recorded') {
        const body = statement.body as BodyOf<'refusal.recorded'>;
        out.push({ topic: this.#topics.refusal(body.code), partition: 0, key: body.agentId, value: JSON.stringify(ocsfRecord(entry, body.code, body.refusal)) });
      } else if (statement.type === 'intake.rejected') {
        const body = statement.body as BodyOf<'intake.rejected'>;
        out.push({ topic: this.#topics.refusal(body.code), partition: 0, key: body.agentId, value: JSON.stringify(ocsfRecord(entry, body.code, body.detail)) });
      } else if (statement.type === 'execution.refused') {
        // An executor was handed a decision that did not verify: forged, replayed, stale or foreign.
        const body = statement.body as BodyOf<'execution.refused'>;
        out.push({ topic: this.#topics.refusal(body.code), partition: 0, key: body.agentId, value: JSON.stringify(ocsfRecord(entry, body.code, body.refusal)) });
      }
      await committer.add(record.offset, out, () => {
        this.counters.exported += out.length;
      });
    }
    await committer.flush();
  }

  async stop(): Promise<void> {
    await this.#subscription?.stop();
    for (const writer of this.#writers.values()) await writer.close();
  }
}
