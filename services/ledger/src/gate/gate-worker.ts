import { formatRefusal, ReasonCode } from '@agent-ledger/refusals';
import {
  EntrySchema,
  createStatement,
  nodeEd25519,
  parseStrictJson,
  signStatement,
  statementHash,
  type BodyOf,
  type Entry,
  type Signer,
  type Statement,
  type StatementType,
} from '@agent-ledger/core';
import type { InBatch, LogBus, OutRecord, Subscription, TransactionalWriter } from '@agent-ledger/kafka';
import type { AuthorityFollower } from '../authority-follower.js';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';
import { PendingConfirmations } from './pending.js';
import { FatigueFold, type FatigueSettings, type FatigueSignal } from './fatigue.js';
import { RulesScreener, applyScreening, isScreened, screeningPolicy, screeningStatement, type Screener } from '@agent-ledger/screen';

/** Default confirmation deadlines by tier (ms): medium 60 s, high 30 s, critical 10 s. */
export const DEFAULT_DEADLINES_MS: Readonly<Record<number, number>> = { 0: 60_000, 1: 60_000, 2: 60_000, 3: 30_000, 4: 10_000 };

/** The pure gate's Decider functions (packages/gate), injected so the worker holds no policy of its own. */
export interface GateDecider<S = unknown> {
  initialState(): S;
  evolve(state: S, event: { statement: Statement; index: number; statementHash: string; sequencedAt: number }): S;
  decide(
    command: { now: number; channel: BodyOf<'proposal.submitted'>['channel']; context: { environment?: string; crisis?: boolean; [key: string]: unknown }; proposal: BodyOf<'proposal.submitted'> },
    state: S,
  ): { outcome: 'allow' | 'verify_first' | 'block'; tier: 0 | 1 | 2 | 3 | 4; risk: number; code: ReasonCode | null; grantId: string | null; grantEntry: number | null; reasons: readonly string[] };
}

/** Settings of the gate worker. */
export interface GateWorkerSettings {
  readonly gate: Signer;
  readonly eventPartitions: number;
  readonly deadlinesMs?: Readonly<Record<number, number>>;
  /** Approvals a tier-4 confirmation needs, from distinct principals. */
  readonly criticalApprovals?: number;
  readonly topics: TopicNames;
  /** The pre-screen of proposals the gate's rules settled (default: the deterministic rules screener). */
  readonly screener?: Screener;
  /** Channels a confirmation request names (default: cli and web). */
  readonly channels?: readonly ('cli' | 'web' | 'telegram' | 'discord' | 'webhook')[];
  /** Grant suggestions and the rubber-stamp signal (defaults: {@link FatigueFold}). */
  readonly fatigue?: Partial<FatigueSettings>;
}

const DECIDED_MEMORY = 100_000;

/**
 * The gate as a service: folds the authority stream into the pure gate's
 * grant table, decides every proposal on the events stream, and signs the
 * classification, the decision (citing the authority index it was evaluated
 * against and the grant entry that matched), refusals and confirmation
 * requests. It also turns human responses and timeouts into final decisions.
 * Its statements go back through intake (the sequencer chains them); the
 * consumed offsets commit in the same Kafka transaction (exactly once).
 */
export class GateWorker {
  readonly #bus: LogBus;
  readonly #follower: AuthorityFollower;
  readonly #settings: GateWorkerSettings;
  readonly #decider: GateDecider;
  #state: unknown;
  readonly #screener: Screener;
  #pending = new PendingConfirmations();
  readonly #fatigue: FatigueFold;
  /** Entries whose fatigue signals this process has sent. */
  readonly #fatigueSent = new Set<string>();
  readonly #writers = new Map<number, TransactionalWriter>();
  /** Proposals whose first decision is on the log or sent (bounded: only redeliveries need it). */
  readonly #decided = new Map<string, true>();
  readonly #finalSent = new Set<string>();
  #subscription: Subscription | undefined;
  readonly counters = { decisions: 0, allow: 0, verify_first: 0, block: 0, final: 0, grantSuggestions: 0 };
  /** Rubber-stamp signals sent, by approver principal. */
  readonly rubberStamps = new Map<string, number>();

  constructor(bus: LogBus, follower: AuthorityFollower, settings: GateWorkerSettings, decider: GateDecider) {
    this.#screener = settings.screener ?? new RulesScreener();
    this.#fatigue = new FatigueFold(settings.fatigue);
    this.#bus = bus;
    this.#decider = decider;
    this.#state = decider.initialState();
    this.#follower = follower;
    this.#settings = settings;
    follower.onEntry((entry, hash) => {
      this.#state = this.#decider.evolve(this.#state, { statement: entry.envelope.statement, index: entry.index, statementHash: hash, sequencedAt: Date.parse(entry.sequencedAt) });
    });
  }

  /** Catches up with the events log (state only), then starts deciding. */
  async start(): Promise<void> {
    for (let kp = 0; kp < this.#settings.eventPartitions; kp++) {
      for await (const record of this.#bus.readRange(this.#settings.topics.events, kp, '0')) {
        const entry = parseEntry(record.value);
        this.#observe(entry, statementHash(entry.envelope.statement));
      }
    }
    this.#subscription = await this.#bus.subscribe({
      groupId: this.#settings.topics.group('gate'),
      topics: [this.#settings.topics.events],
      fromBeginning: true,
      commitOffsets: false,
      onBatch: (batch) => this.#handle(batch),
    });
  }

  #remember(proposal: string): void {
    this.#decided.set(proposal, true);
    if (this.#decided.size > DECIDED_MEMORY) {
      const oldest = this.#decided.keys().next();
      if (oldest.done !== true) this.#decided.delete(oldest.value);
    }
  }

  /** Folds an entry into the queue, the decided set and the fatigue fold; returns the touched confirmation and the fatigue signals the entry calls for. */
  #observe(entry: Entry, hash: string): { touched: ReturnType<PendingConfirmations['evolve']>; signals: readonly FatigueSignal[] } {
    const signals = this.#fatigue.evolve(entry, hash);
    const statement = entry.envelope.statement;
    if (statement.type === 'decision.recorded') {
      const body = statement.body as BodyOf<'decision.recorded'>;
      this.#remember(body.proposal);
      if (body.outcome !== 'verify_first') this.#finalSent.delete(body.proposal);
    }
    return { touched: this.#pending.evolve(entry, hash), signals };
  }

  async #writer(kafkaPartition: number): Promise<TransactionalWriter> {
    let writer = this.#writers.get(kafkaPartition);
    if (writer === undefined) {
      writer = await this.#bus.writer(this.#settings.topics.group(`gate-${kafkaPartition}`));
      this.#writers.set(kafkaPartition, writer);
    }
    return writer;
  }

  async #handle(batch: InBatch): Promise<void> {
    const out: OutRecord[] = [];
    const partition = ledgerPartitionOf(this.#settings.topics, batch.topic, batch.partition);
    for (const record of batch.records) {
      const entry = parseEntry(record.value);
      const hash = statementHash(entry.envelope.statement);
      const { touched, signals } = this.#observe(entry, hash);
      const statement = entry.envelope.statement;
      if (statement.type === 'proposal.submitted' && !this.#decided.has(hash)) {
        // Never decide on an older registry than the proposal was sequenced against
        // (a gate running apart from the sequencer may lag): verify-chain refuses that.
        if (this.#follower.current().size < entry.authorityIndex) await this.#follower.waitFor(entry.authorityIndex, 30_000);
        out.push(...(await this.#decideProposal(entry, hash, partition)));
        this.#remember(hash);
      } else if (statement.type === 'human.response' && touched !== undefined) {
        // Judged on sequencer time: an answer sequenced after the deadline is refused, never honoured.
        if (touched.status === 'pending' && Date.parse(entry.sequencedAt) > touched.deadlineMs) {
          out.push(this.#say('refusal.recorded', { agentId: touched.agentId, proposal: touched.proposal, code: ReasonCode.STALE_APPROVAL, refusal: formatRefusal(ReasonCode.STALE_APPROVAL, `response by ${statement.author.principal} arrived after the deadline`) }, partition));
        }
      }
      if (touched !== undefined && touched.status !== 'pending' && !touched.decided && !this.#finalSent.has(touched.proposal)) {
        out.push(...this.#finalDecision(touched, partition));
        this.#finalSent.add(touched.proposal);
      }
      if (signals.length > 0 && !this.#fatigueSent.has(hash)) {
        // Signals only: they are signed onto the log and counted, and change no decision.
        this.#fatigueSent.add(hash);
        if (this.#fatigueSent.size > DECIDED_MEMORY) this.#fatigueSent.delete(this.#fatigueSent.values().next().value as string);
        for (const signal of signals) out.push(this.#signal(signal, partition));
      }
    }
    const last = batch.records.at(-1);
    if (last === undefined) return;
    const writer = await this.#writer(batch.partition);
    await writer.commit(out, { groupId: this.#settings.topics.group('gate'), topic: batch.topic, partition: batch.partition, nextOffset: (BigInt(last.offset) + 1n).toString() });
  }

  async #decideProposal(entry: Entry, hash: string, partition: number): Promise<OutRecord[]> {
    const body = entry.envelope.statement.body as BodyOf<'proposal.submitted'>;
    const authorityIndex = this.#follower.current().size;
    const gated = this.#decider.decide(
      {
        now: Date.parse(entry.sequencedAt),
        channel: body.channel,
        context: body.context as { environment?: string; crisis?: boolean },
        proposal: body,
      },
      this.#state,
    );
    const agentId = body.agentId;
    const records: OutRecord[] = [];
    let decision = gated;
    if (isScreened(gated)) {
      // The verdict is signed onto the log before the decision it shapes, so
      // verify-chain can replay the same rule (applyScreening) from the bundle.
      const screened = await this.#screener.screen({ proposal: body, proposalHash: hash, tier: gated.tier, risk: gated.risk, rules: gated.reasons });
      records.push(this.#say('screening.verdict', screeningStatement(screened, agentId, hash), partition));
      decision = applyScreening(gated, screeningPolicy(gated.tier, screened.verdict));
    }
    this.counters.decisions += 1;
    this.counters[decision.outcome] += 1;
    records.push(
      this.#say('classification.recorded', { agentId, proposal: hash, tier: decision.tier, risk: decision.risk, rules: decision.reasons.slice(0, 256).map((r) => r.slice(0, 256)) }, partition),
      this.#say('decision.recorded', { agentId, proposal: hash, outcome: decision.outcome, code: decision.code, tier: decision.tier, risk: decision.risk, authorityIndex, grantId: decision.grantId, grantEntry: decision.grantEntry }, partition),
    );
    if (decision.outcome === 'block' && decision.code !== null) {
      records.push(this.#say('refusal.recorded', { agentId, proposal: hash, code: decision.code, refusal: formatRefusal(decision.code, `${body.actionType} on ${body.targetResource}`) }, partition));
    }
    if (decision.outcome === 'verify_first') {
      const deadlineMs = (this.#settings.deadlinesMs ?? DEFAULT_DEADLINES_MS)[decision.tier] ?? 30_000;
      records.push(
        this.#say('confirmation.requested', {
          agentId,
          proposal: hash,
          tier: decision.tier,
          deadline: new Date(Date.now() + deadlineMs).toISOString(),
          approvalsRequired: decision.tier === 4 ? (this.#settings.criticalApprovals ?? 2) : 1,
          channels: [...(this.#settings.channels ?? ['cli', 'web'])],
        }, partition),
      );
    }
    return records;
  }

  #finalDecision(pending: { proposal: string; agentId: string; tier: 0 | 1 | 2 | 3 | 4; status: string }, partition: number): OutRecord[] {
    const authorityIndex = this.#follower.current().size;
    const outcome = pending.status === 'approved' ? 'allow' : 'deny';
    const code = pending.status === 'approved' ? null : pending.status === 'timed_out' ? ReasonCode.TIMEOUT : ReasonCode.HUMAN_DENIED;
    this.counters.final += 1;
    const records = [this.#say('decision.recorded', { agentId: pending.agentId, proposal: pending.proposal, outcome, code, tier: pending.tier, risk: 0, authorityIndex, grantId: null, grantEntry: null }, partition)];
    if (code !== null) {
      const detail = code === ReasonCode.TIMEOUT ? 'no human answered before the deadline' : 'an approver denied the action';
      records.push(this.#say('refusal.recorded', { agentId: pending.agentId, proposal: pending.proposal, code, refusal: formatRefusal(code, detail) }, partition));
    }
    return records;
  }

  #signal(signal: FatigueSignal, partition: number): OutRecord {
    if (signal.type === 'grant.suggested') {
      this.counters.grantSuggestions += 1;
      return this.#say('grant.suggested', signal.body, partition);
    }
    this.rubberStamps.set(signal.body.approver, (this.rubberStamps.get(signal.body.approver) ?? 0) + 1);
    return this.#say('approval.rushed', signal.body, partition);
  }

  #say<T extends StatementType>(type: T, body: BodyOf<T>, partition: number): OutRecord {
    const signer = this.#settings.gate;
    const statement = createStatement(type, body, signer);
    const envelope = signStatement(statement, [signer], nodeEd25519);
    return { topic: this.#settings.topics.intake, partition, key: (body as { agentId?: string }).agentId ?? null, value: JSON.stringify(envelope) };
  }

  /** Stops deciding. */
  async stop(): Promise<void> {
    await this.#subscription?.stop();
    for (const writer of this.#writers.values()) await writer.close();
  }
}

/** Parses an entry record from the events or authority topic (written by the sequencer). */
export function parseEntry(value: Buffer): Entry {
  return EntrySchema.parse(parseStrictJson(value.toString('utf8'))) as unknown as Entry;
}
