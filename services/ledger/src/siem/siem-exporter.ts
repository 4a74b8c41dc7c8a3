import type { ReasonCode } from '@agent-ledger/refusals';
import { statementHash, type BodyOf, type Entry } from '@agent-ledger/core';
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

/** What the agent tried to do: the fields of its `proposal.submitted` that name the operation. */
export interface AttemptedOperation {
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
}

/** OCSF 1.1 attributes a refusal record carries, by where the schema requires them (checked by test/src/siem.unit.test.ts). */
export const OCSF_REQUIRED = {
  /** base_event: classification and occurrence traits, metadata. */
  base: ['activity_id', 'category_uid', 'class_uid', 'metadata', 'severity_id', 'time', 'type_uid'],
  /** api_activity (class 6003). */
  apiActivity: ['actor', 'api', 'src_endpoint'],
} as const;

/**
 * The SIEM record of a refusal, an OCSF 1.1 API Activity event (class 6003,
 * activity Other: "Refuse") with the `security_control` profile (action
 * Denied, disposition Blocked). It says who tried what: `actor.user` is the
 * agent, `api.operation` the action type it asked for (`api.service.name` the
 * tool), `resources` the target and recipient, and `message` all of it in
 * one sentence. Everything OCSF has no attribute for (the signed refusal
 * entry itself and its ledger position, so an investigator can verify it)
 * is under `unmapped`, as OCSF prescribes; there is no other top-level
 * object. `attempted` is the refused proposal's operation when the exporter
 * saw it; an `intake.rejected` names bytes, not an operation.
 */
export function ocsfRecord(entry: Entry, code: ReasonCode, detail: string, attempted?: AttemptedOperation): Record<string, unknown> {
  const statement = entry.envelope.statement;
  const body = statement.body as { agentId?: string; proposal?: string; input?: string };
  const [severityId, severity] = SEVERITY[code] ?? [3, 'Medium'];
  const agent = body.agentId ?? 'unknown';
  const time = Date.parse(entry.sequencedAt);
  const operation = attempted?.actionType ?? (statement.type === 'intake.rejected' ? 'statement.submit' : 'proposal.submit');
  const what = attempted === undefined
    ? statement.type === 'intake.rejected' ? `submitted a statement (input ${body.input ?? '?'})` : `proposed ${body.proposal ?? '?'}`
    : `tried ${attempted.actionType} with ${attempted.tool} on ${attempted.targetResource}${attempted.recipient === 'none' ? '' : ` for ${attempted.recipient}`}`;
  return {
    activity_id: 99,
    activity_name: 'Refuse',
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: 6003,
    class_name: 'API Activity',
    type_uid: 600399,
    type_name: 'API Activity: Other',
    severity_id: severityId,
    severity,
    status_id: 2,
    status: 'Failure',
    status_code: code,
    status_detail: detail,
    action_id: 2,
    action: 'Denied',
    disposition_id: 2,
    disposition: 'Blocked',
    time,
    message: `${agent} ${what}: refused, ${code}`,
    actor: { user: { uid: agent, name: agent, type_id: 99, type: 'AI agent' } },
    api: {
      operation,
      ...(attempted === undefined ? {} : { service: { name: attempted.tool } }),
      request: { uid: body.proposal ?? body.input ?? statement.id },
      response: { code: 403, error: code, message: detail },
    },
    src_endpoint: { uid: agent, name: agent },
    dst_endpoint: { svc_name: 'agent-ledger' },
    resources: attempted === undefined
      ? [{ uid: body.proposal ?? body.input ?? '', type: statement.type === 'intake.rejected' ? 'intake record' : 'tool-call proposal' }]
      : [
          { uid: attempted.targetResource, name: attempted.targetResource, type: 'target' },
          ...(attempted.recipient === 'none' ? [] : [{ uid: attempted.recipient, name: attempted.recipient, type: 'recipient' }]),
        ],
    metadata: { version: '1.1.0', profiles: ['security_control'], product: { name: 'agent-ledger', vendor_name: 'agent-ledger' }, uid: statement.id, logged_time: time },
    unmapped: {
      ledger_partition: entry.partition,
      ledger_index: entry.index,
      entry_hash: entry.hash,
      signed_by: statement.author,
      ...(body.proposal === undefined ? {} : { proposal_hash: body.proposal }),
      ...(attempted === undefined ? {} : { scope: attempted.scope }),
      entry,
    },
  };
}

/** Proposals remembered per exporter to name what a later refusal refused (a refusal follows its proposal in the agent's partition). */
const REMEMBERED_PROPOSALS = 50_000;

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
  /** Proposal hash -> what it asked for, newest kept (bounded). */
  readonly #attempts = new Map<string, AttemptedOperation>();

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
      if (statement.type === 'proposal.submitted') {
        const body = statement.body as BodyOf<'proposal.submitted'>;
        this.#attempts.set(statementHash(statement), { tool: body.tool, actionType: body.actionType, targetResource: body.targetResource, recipient: body.recipient, scope: body.scope });
        if (this.#attempts.size > REMEMBERED_PROPOSALS) {
          const oldest = this.#attempts.keys().next();
          if (oldest.done !== true) this.#attempts.delete(oldest.value);
        }
      } else if (statement.type === 'refusal.recorded') {
        const body = statement.body as BodyOf<'refusal.recorded'>;
        out.push({ topic: this.#topics.refusal(body.code), partition: 0, key: body.agentId, value: JSON.stringify(ocsfRecord(entry, body.code, body.refusal, this.#attempts.get(body.proposal))) });
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
