import {
  EntrySchema,
  createStatement,
  nodeEd25519,
  parseStrictJson,
  signStatement,
  statementHash,
  type Entry,
  type Signer,
  type Statement,
} from '@agent-ledger/core';
import { ChunkedCommitter, type InBatch, type InRecord, type LogBus, type OutRecord, type Subscription, type TransactionalWriter } from '@agent-ledger/kafka';
import {
  DEFAULT_CONFIRMATION,
  DEFAULT_DEADLINES_MS,
  DEFAULT_FATIGUE,
  RELEASED_RULES,
  decide,
  evolve,
  initialState,
  lifeEntryOf,
  remember,
  type ConfirmationSettings,
  type FatigueSettings,
  type LifeCommand,
  type LifeState,
  type RulesSpec,
  type Said,
  type SaidGroup,
} from '@agent-ledger/rulebook';
import { LATEST_RULES_VERSION, type GateState } from '@agent-ledger/gate';
import { RulesScreener, type Screener } from '@agent-ledger/screen';
import type { AuthorityFollower } from '../authority-follower.js';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';
import { openProposalsStart } from '../sequencer/checkpoint-record.js';

export { DEFAULT_DEADLINES_MS };

/** The pure gate's authority fold (packages/gate), injected so the worker holds no policy of its own. */
export interface GateDecider<S = unknown> {
  initialState(): S;
  evolve(state: S, event: { statement: Statement; index: number; statementHash: string; sequencedAt: number }): S;
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
  /** Grant suggestions and the rubber-stamp signal (defaults: the rulebook's DEFAULT_FATIGUE). */
  readonly fatigue?: Partial<FatigueSettings>;
  /** The rules new decisions are made with (default: the latest released version). */
  readonly rules?: RulesSpec;
  /** Most bytes of output per transaction (default: the shared ChunkedCommitter bound). */
  readonly transactionBytes?: number;
}

/** Marks of groups this process committed but may not have read back from the log yet (bounded). */
const SENT_MEMORY = 100_000;

/**
 * The gate as a service: folds the authority stream into the pure gate's
 * grant table and each events partition into the rulebook's proposal-life
 * state, asks the rulebook what to sign (first decisions, final decisions,
 * refusals of answers that did not count, fatigue signals), and signs and
 * publishes exactly that. Its statements go back through intake (the
 * sequencer chains them); output and consumed offsets commit together in
 * transactions under the broker's limit (ChunkedCommitter), and nothing is
 * marked sent before the transaction carrying it has committed.
 */
export class GateWorker {
  readonly #bus: LogBus;
  readonly #follower: AuthorityFollower;
  readonly #settings: GateWorkerSettings;
  readonly #authorityFold: GateDecider;
  #gateState: unknown;
  readonly #screener: Screener;
  readonly #rules: RulesSpec;
  readonly #confirmation: ConfirmationSettings;
  readonly #fatigue: FatigueSettings;
  /** Proposal-life state per events partition (ledger partition number). */
  readonly #lives = new Map<number, LifeState>();
  readonly #writers = new Map<number, { writer: TransactionalWriter; committer: ChunkedCommitter }>();
  /** Marks of committed groups ({@link SaidGroup.marks}). */
  readonly #sent = new Map<string, true>();
  #subscription: Subscription | undefined;
  readonly counters = { decisions: 0, allow: 0, verify_first: 0, block: 0, final: 0, grantSuggestions: 0, refusedAnswers: 0, commitFailures: 0 };
  /** Rubber-stamp signals sent, by approver principal. */
  readonly rubberStamps = new Map<string, number>();

  constructor(bus: LogBus, follower: AuthorityFollower, settings: GateWorkerSettings, decider: GateDecider) {
    this.#screener = settings.screener ?? new RulesScreener();
    this.#bus = bus;
    this.#authorityFold = decider;
    this.#gateState = decider.initialState();
    this.#follower = follower;
    this.#settings = settings;
    this.#rules = settings.rules ?? (RELEASED_RULES.get(LATEST_RULES_VERSION) as RulesSpec);
    this.#confirmation = {
      deadlinesMs: settings.deadlinesMs ?? DEFAULT_DEADLINES_MS,
      criticalApprovals: settings.criticalApprovals ?? DEFAULT_CONFIRMATION.criticalApprovals,
      channels: settings.channels ?? DEFAULT_CONFIRMATION.channels,
    };
    this.#fatigue = { ...DEFAULT_FATIGUE, ...settings.fatigue };
    follower.onEntry((entry, hash) => {
      this.#gateState = this.#authorityFold.evolve(this.#gateState, { statement: entry.envelope.statement, index: entry.index, statementHash: hash, sequencedAt: Date.parse(entry.sequencedAt) });
    });
  }

  /** Catches up with the events log (state only), then starts deciding. */
  async start(): Promise<void> {
    await this.#catchUp();
    this.#subscription = await this.#bus.subscribe({
      groupId: this.#settings.topics.group('gate'),
      topics: [this.#settings.topics.events],
      fromBeginning: true,
      commitOffsets: false,
      onBatch: (batch) => this.#handle(batch),
    });
  }

  /**
   * Folds each events partition (state only) from where its newest
   * checkpoint says the open proposals begin, never from further on than
   * the gate's own committed offset: every proposal sequenced before the
   * checkpoint's `lifeFromMs` had its decisions on the log then, so the
   * fold from there rebuilds every open proposal and confirmation. Without
   * a usable checkpoint it reads from the start. What the fold misses
   * before that point is history only: approvals older than the checkpoint
   * no longer count toward a grant suggestion.
   */
  async #catchUp(): Promise<void> {
    const topic = this.#settings.topics.events;
    const committed = await this.#bus.committedOffsets(this.#settings.topics.group('gate'), topic);
    for (let kp = 0; kp < this.#settings.eventPartitions; kp++) {
      const from = await this.#catchUpFrom(kp, committed.get(kp) ?? null);
      this.catchUp.set(kp, { from, read: 0 });
      for await (const record of this.#bus.readRange(topic, kp, from)) {
        this.#fold(parseEntry(record.value), record.value.length);
        const seen = this.catchUp.get(kp);
        if (seen !== undefined) seen.read += 1;
      }
    }
  }

  /** Where the catch-up of events Kafka partition `kp` starts (see {@link #catchUp}). */
  async #catchUpFrom(kp: number, committed: string | null): Promise<string> {
    const byTime = await openProposalsStart(this.#bus, this.#settings.topics, kp);
    return committed !== null && BigInt(committed) < BigInt(byTime) ? committed : byTime;
  }

  /** Where each events Kafka partition's catch-up started and how many entries it read (shown in the log and the bench). */
  readonly catchUp = new Map<number, { from: string; read: number }>();

  #life(partition: number): LifeState {
    let life = this.#lives.get(partition);
    if (life === undefined) {
      life = initialState();
      this.#lives.set(partition, life);
    }
    return life;
  }

  /** Folds an entry into its partition's state (an entry already folded is skipped by index); returns its hash. */
  #fold(entry: Entry, bytes: number): string {
    const hash = statementHash(entry.envelope.statement);
    evolve(this.#life(entry.partition), lifeEntryOf(entry, hash, bytes));
    return hash;
  }

  /**
   * Proposals admitted but without a final decision `graceMs` after they
   * should have one: a first decision is due at once, a final one at its
   * request's deadline. The liveness check (metric `ledger_overdue_proposals`
   * and /readyz): it should always be 0.
   */
  overdueProposals(nowMs: number = Date.now(), graceMs = 30_000): number {
    let overdue = 0;
    for (const life of this.#lives.values()) {
      for (const waiting of life.proposals.values()) if (waiting.sequencedAtMs + graceMs < nowMs) overdue += 1;
      for (const open of life.confirmations.values()) {
        if (open.request !== null && open.request.deadlineMs + graceMs < nowMs) overdue += 1;
      }
    }
    return overdue;
  }

  async #writer(kafkaPartition: number, topic: string): Promise<ChunkedCommitter> {
    let held = this.#writers.get(kafkaPartition);
    if (held === undefined) {
      const writer = await this.#bus.writer(this.#settings.topics.group(`gate-${kafkaPartition}`));
      const committer = new ChunkedCommitter(writer, { groupId: this.#settings.topics.group('gate'), topic, partition: kafkaPartition }, this.#settings.transactionBytes);
      held = { writer, committer };
      this.#writers.set(kafkaPartition, held);
    }
    return held.committer;
  }

  async #handle(batch: InBatch): Promise<void> {
    const partition = ledgerPartitionOf(this.#settings.topics, batch.topic, batch.partition);
    const committer = await this.#writer(batch.partition, batch.topic);
    // Groups of this batch not committed yet: a second record of the batch must not say them again.
    const inFlight = new Set<string>();
    const sent = (mark: string): boolean => this.#sent.has(mark) || inFlight.has(mark);
    try {
      for (const record of committer.uncommitted(batch.records)) {
        const groups = await this.#react(record, partition, sent);
        const out: OutRecord[] = [];
        const kept: SaidGroup[] = [];
        for (const group of groups) {
          if (group.marks.some(sent)) continue;
          for (const mark of group.marks) inFlight.add(mark);
          kept.push(group);
          for (const statement of group.statements) out.push(this.#say(statement, partition));
        }
        await committer.add(record.offset, out, () => {
          for (const group of kept) {
            for (const mark of group.marks) remember(this.#sent, mark, true, SENT_MEMORY);
            this.#count(group);
          }
        });
      }
      await committer.flush();
    } catch (err) {
      // Nothing of the failed transaction was marked; the batch is redelivered
      // and what it did not commit is decided again (the writer renews its
      // producer itself; a fenced one stays fenced).
      this.counters.commitFailures += 1;
      throw err;
    }
  }

  /** Folds a record and asks the rulebook what it calls for. */
  async #react(record: InRecord, partition: number, sent: (mark: string) => boolean): Promise<SaidGroup[]> {
    const entry = parseEntry(record.value);
    const hash = this.#fold(entry, record.value.length);
    const life = this.#life(partition);
    const statement = entry.envelope.statement;
    const groups: SaidGroup[] = [];
    const ask = (command: LifeCommand): void => {
      groups.push(...decide(command, life).groups);
    };
    switch (statement.type) {
      case 'proposal.submitted':
        if (!sent(`first:${hash}`) && life.proposals.has(hash)) groups.push(...(await this.#firstDecision(entry, hash, life)));
        break;
      case 'human.response': {
        ask({ type: 'answer', response: hash });
        ask({ type: 'settle', proposal: (statement.body as { proposal: string }).proposal, ...this.#settleFacts(life, (statement.body as { proposal: string }).proposal) });
        ask({ type: 'signals', entry: hash, fatigue: this.#fatigue, sent });
        break;
      }
      case 'timeout.recorded': {
        const proposal = (statement.body as { proposal: string }).proposal;
        ask({ type: 'settle', proposal, ...this.#settleFacts(life, proposal) });
        break;
      }
      case 'decision.recorded':
        ask({ type: 'signals', entry: hash, fatigue: this.#fatigue, sent });
        break;
      default:
        break;
    }
    return groups;
  }

  #settleFacts(life: LifeState, proposal: string): { rules: RulesSpec; keyRevoked: boolean; authorityIndex: number } {
    const { state, size } = this.#follower.current();
    const open = life.confirmations.get(proposal);
    const key = open === undefined ? undefined : state.key(open.keyId);
    return { rules: this.#rules, keyRevoked: key?.revokedAt !== undefined, authorityIndex: size };
  }

  async #firstDecision(entry: Entry, hash: string, life: LifeState): Promise<readonly SaidGroup[]> {
    // Never decide on an older registry than the proposal was sequenced against
    // (a gate running apart from the sequencer may lag): verify-chain refuses that.
    if (this.#follower.current().size < entry.authorityIndex) await this.#follower.waitFor(entry.authorityIndex, 30_000);
    const { state, size } = this.#follower.current();
    const key = state.key(entry.envelope.statement.author.keyId);
    const command = {
      type: 'decide_proposal' as const,
      proposal: hash,
      facts: { gate: this.#gateState as GateState, keyRevoked: key?.revokedAt !== undefined, rules: this.#rules },
      authorityIndex: size,
      nowMs: Date.now(),
      confirmation: this.#confirmation,
    };
    const first = decide(command, life);
    if (first.screen === null) return first.groups;
    const { proposal, gated } = first.screen;
    const screening = await this.#screener.screen({ proposal: proposal.body, proposalHash: hash, tier: gated.tier, risk: gated.risk, rules: gated.reasons });
    return decide({ ...command, screening }, life).groups;
  }

  /** Counts a committed group by what it settles. */
  #count(group: SaidGroup): void {
    const first = group.marks[0] ?? '';
    for (const statement of group.statements) {
      if (statement.type === 'decision.recorded' && first.startsWith('first:')) {
        this.counters.decisions += 1;
        if (statement.body.outcome !== 'deny') this.counters[statement.body.outcome] += 1;
      } else if (statement.type === 'decision.recorded') this.counters.final += 1;
      else if (statement.type === 'grant.suggested') this.counters.grantSuggestions += 1;
      else if (statement.type === 'approval.rushed') this.rubberStamps.set(statement.body.approver, (this.rubberStamps.get(statement.body.approver) ?? 0) + 1);
      else if (statement.type === 'refusal.recorded' && first.startsWith('answer:')) this.counters.refusedAnswers += 1;
    }
  }

  #say(said: Said, partition: number): OutRecord {
    const signer = this.#settings.gate;
    const statement = createStatement(said.type, said.body, signer);
    const envelope = signStatement(statement, [signer], nodeEd25519);
    return { topic: this.#settings.topics.intake, partition, key: (said.body as { agentId?: string }).agentId ?? null, value: JSON.stringify(envelope) };
  }

  /** Stops deciding. */
  async stop(): Promise<void> {
    await this.#subscription?.stop();
    for (const held of this.#writers.values()) await held.writer.close();
  }
}

/** Parses an entry record from the events or authority topic (written by the sequencer). */
export function parseEntry(value: Buffer): Entry {
  return EntrySchema.parse(parseStrictJson(value.toString('utf8'))) as unknown as Entry;
}
