import {
  EntrySchema,
  canonicalJson,
  createStatement,
  keyIdOf,
  nodeEd25519,
  parseStrictJson,
  signCanonicalStatement,
  signStatement,
  statementHash,
  type Entry,
  type Envelope,
  type Signer,
  type Statement,
} from '@agent-ledger/core';
import { ReasonCode } from '@agent-ledger/refusals';
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
  type WaitingProposal,
} from '@agent-ledger/rulebook';
import { LATEST_RULES_VERSION, type GateState } from '@agent-ledger/gate';
import { RulesScreener, isLocalScreener, type Screener } from '@agent-ledger/screen';
import type { AuthorityFollower } from '../authority-follower.js';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';
import { WINDOW_MARGIN_MS, openProposalsStart } from '../sequencer/checkpoint-record.js';
import { INLINE_FIRST_DECISION, INLINE_HEADER, type FirstDecider, type InlineStatement } from '../sequencer/inline-decision.js';
import { firstDecisionStep, screenedFirstDecision } from './first-decision.js';
import {
  RejectionWatch,
  attemptHeaders,
  nextPlace,
  publishedAttempts,
  sentStatement,
  type Attempt,
  type AttemptPlace,
  type RejectionCounters,
  type RejectionOutcome,
  type RetryPolicy,
  type SentStatement,
} from './rejection-watch.js';

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
  /** Where the worker says what an operator must know (a proposal it gave up deciding). */
  readonly log?: (message: string) => void;
}

/** Marks of groups this process committed but may not have read back from the log yet (bounded). */
const SENT_MEMORY = 100_000;

/** Times a proposal is decided again after the sequencer rejected the gate's decision or request, at most. */
export const REDECISIONS = 3;

/**
 * Rejections a fresh statement may cure: not fresh when sequenced (it waited
 * in intake: a sequencer outage), and the rulebook's judgement (a decision
 * citing authority entries stamped after it by a sequencer clock behind the
 * authority's, a final decision judged on answers read in another order, the
 * log before genesis). A rejection of the gate's key, signature or format
 * would come again.
 */
const CURABLE: ReadonlySet<string> = new Set([ReasonCode.REPLAY, ReasonCode.POLICY_VIOLATION, ReasonCode.STALE_APPROVAL, ReasonCode.INTEGRITY_FAILURE]);

/** Which rejected decisions (and requests) the gate makes again: curable ones, {@link REDECISIONS} times. */
const retryDecision: RetryPolicy<string> = (attempt, rejection) => {
  if (!CURABLE.has(rejection.code)) return `${rejection.code} is not cured by deciding again`;
  return attempt.number <= REDECISIONS || `rejected ${attempt.number} times`;
};

/** Statements whose rejection leaves a proposal without the decision or request it needs: what the gate watches. */
const WATCHED = ['decision.recorded', 'confirmation.requested'] as const;

/** A group to sign, and the attempt it signs again, if it does. */
interface Reaction {
  readonly group: SaidGroup;
  readonly previous?: Attempt<string>;
}

/** An attempt the sequencer answered in full, and how it ends once the output of the record that answered it commits. */
interface Answered {
  readonly attempt: Attempt<string>;
  readonly outcome: RejectionOutcome | undefined;
  /** What an operator is told when the gate gives up. */
  readonly message?: string;
}

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
export class GateWorker implements FirstDecider {
  readonly #bus: LogBus;
  readonly #follower: AuthorityFollower;
  readonly #settings: GateWorkerSettings;
  readonly #authorityFold: GateDecider;
  #gateState: unknown;
  readonly #screener: Screener;
  readonly #rules: RulesSpec;
  readonly #confirmation: ConfirmationSettings;
  readonly #fatigue: FatigueSettings;
  /** Whether the gate's key id is the key derived from its seed: then what it signs inline is vouched for ({@link InlineStatement}). */
  readonly #keyIdOwn: boolean;
  /** Proposal-life state per events partition (ledger partition number). */
  readonly #lives = new Map<number, LifeState>();
  readonly #writers = new Map<number, { writer: TransactionalWriter; committer: ChunkedCommitter }>();
  /** Marks of committed groups ({@link SaidGroup.marks}). */
  readonly #sent = new Map<string, true>();
  /** Decisions and requests this gate signed, until the sequencer has answered them (the feedback loop shared with the timer). */
  readonly #watch = new RejectionWatch<string>({ watched: WATCHED, policy: retryDecision, memory: SENT_MEMORY });
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
    this.#keyIdOwn = keyIdOf(settings.gate.seed, nodeEd25519) === settings.gate.keyId;
    follower.onEntry((entry, hash) => {
      this.#gateState = this.#authorityFold.evolve(this.#gateState, { statement: entry.envelope.statement, index: entry.index, statementHash: hash, sequencedAt: Date.parse(entry.sequencedAt) });
    });
  }

  /** Decisions and requests the sequencer rejected, by how they ended: decided again, given up, or moot (a final decision was on the log by then). */
  get rejections(): Readonly<RejectionCounters> {
    return this.#watch.counters;
  }

  /** Decisions and requests this gate waits for the sequencer to answer (and answered ones whose output is not committed yet). */
  get unanswered(): number {
    return this.#watch.size;
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
   *
   * It also recalls what its predecessor signed and the sequencer may still
   * reject: the decisions and requests on intake since the fold's first
   * entry ({@link #recall}), less those the sequencer answered below the
   * committed offset (the predecessor acted on those answers). The answers
   * from the committed offset on come again through the subscription.
   */
  async #catchUp(): Promise<void> {
    const topic = this.#settings.topics.events;
    const committed = await this.#bus.committedOffsets(this.#settings.topics.group('gate'), topic);
    for (let kp = 0; kp < this.#settings.eventPartitions; kp++) {
      const next = committed.get(kp) ?? null;
      const from = await this.#catchUpFrom(kp, next);
      const seen = { from, read: 0, recalled: 0 };
      this.catchUp.set(kp, seen);
      const answers: { statement: Statement; sequencedAtMs: number }[] = [];
      let firstMs: number | undefined;
      for await (const record of this.#bus.readRange(topic, kp, from)) {
        const entry = parseEntry(record.value);
        this.#fold(entry, record.value.length);
        seen.read += 1;
        firstMs ??= Number(record.timestamp);
        const statement = entry.envelope.statement;
        if (next !== null && BigInt(record.offset) < BigInt(next) && (statement.type === 'intake.rejected' || statement.author.keyId === this.#settings.gate.keyId)) {
          answers.push({ statement, sequencedAtMs: Date.parse(entry.sequencedAt) });
        }
      }
      // A gate that never committed signed nothing; one that did signed nothing about the open proposals before the fold's first entry.
      if (next !== null && firstMs !== undefined && Number.isFinite(firstMs)) seen.recalled = await this.#recall(kp, firstMs - WINDOW_MARGIN_MS);
      for (const { statement, sequencedAtMs } of answers) this.#watch.observe(statement, sequencedAtMs);
    }
    this.#watch.closeAnswered();
  }

  /**
   * Watches again the decisions and requests this gate's key signed on the
   * intake partition of events Kafka partition `kp` since `fromMs` (read
   * back by their attempt header); returns how many groups it found.
   */
  async #recall(kp: number, fromMs: number): Promise<number> {
    const topics = this.#settings.topics;
    let recalled = 0;
    for (const published of await publishedAttempts(this.#bus, topics.intake, ledgerPartitionOf(topics, topics.events, kp), fromMs, this.#settings.gate.keyId)) {
      const proposal = proposalOf(published.statements.map((s) => s.statement));
      const statements: SentStatement[] = published.statements.map(({ input, id, type, said }) => ({ input, id, type, said }));
      if (proposal !== undefined && this.#watch.track(proposal, published, statements) !== undefined) recalled += 1;
    }
    return recalled;
  }

  /** Where the catch-up of events Kafka partition `kp` starts (see {@link #catchUp}). */
  async #catchUpFrom(kp: number, committed: string | null): Promise<string> {
    const byTime = await openProposalsStart(this.#bus, this.#settings.topics, kp);
    return committed !== null && BigInt(committed) < BigInt(byTime) ? committed : byTime;
  }

  /** Where each events Kafka partition's catch-up started and how many entries it read (shown in the log and the bench). */
  readonly catchUp = new Map<number, { from: string; read: number; recalled: number }>();

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
        // A request is due with the first decision: one the sequencer rejected leaves the proposal waiting from then.
        const dueMs = open.request === null ? open.proposedAtMs : open.request.deadlineMs;
        if (dueMs + graceMs < nowMs) overdue += 1;
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
        const { groups, answered, inline } = await this.#react(record, partition, sent);
        const out: OutRecord[] = [];
        const kept: { group: SaidGroup; place: AttemptPlace; statements: SentStatement[] }[] = [];
        for (const { group, previous } of groups) {
          if (group.marks.some(sent)) continue;
          for (const mark of group.marks) inFlight.add(mark);
          const signed = group.statements.map((said) => this.#sign(said));
          const place = nextPlace(previous, signed[0]?.id ?? '', Date.now());
          const records = signed.map((statement) => this.#record(statement, partition, place));
          out.push(...records);
          kept.push({ group, place, statements: records.map((r, n) => sentStatement(r, signed[n] as Statement)) });
        }
        await committer.add(record.offset, out, () => {
          for (const { group, place, statements } of kept) {
            for (const mark of group.marks) remember(this.#sent, mark, true, SENT_MEMORY);
            this.#count(group);
            const proposal = proposalOf(group.statements);
            if (proposal !== undefined) this.#watch.track(proposal, place, statements);
          }
          if (answered !== undefined && this.#watch.close(answered.attempt, answered.outcome) && answered.message !== undefined) this.#settings.log?.(answered.message);
          // A first decision the sequencer chained beside its proposal is this gate's decision: counted once, as it commits.
          if (inline !== undefined) this.#count(inline);
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

  /** Folds a record and asks the rulebook what it calls for; reads in it the sequencer's answer to what the gate signed. */
  async #react(record: InRecord, partition: number, sent: (mark: string) => boolean): Promise<{ groups: Reaction[]; answered: Answered | undefined; inline?: SaidGroup }> {
    const entry = parseEntry(record.value);
    const hash = this.#fold(entry, record.value.length);
    const life = this.#life(partition);
    const statement = entry.envelope.statement;
    const groups: Reaction[] = [];
    // The sequencer chained this proposal's first decision right after it, in the same transaction: nothing to decide.
    const decidedInline = record.headers[INLINE_HEADER] === INLINE_FIRST_DECISION;
    const ask = (command: LifeCommand): void => {
      for (const group of decide(command, life).groups) groups.push({ group });
    };
    switch (statement.type) {
      case 'proposal.submitted': {
        const waiting = life.proposals.get(hash);
        if (!decidedInline && !sent(`first:${hash}`) && waiting !== undefined) for (const group of await this.#firstDecision(waiting, life)) groups.push({ group });
        break;
      }
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
    const inline = decidedInline && statement.type === 'decision.recorded' && statement.author.keyId === this.#settings.gate.keyId ? { marks: [`first:${(statement.body as { proposal: string }).proposal}`], statements: [{ type: statement.type, body: statement.body } as Said] } : undefined;
    const attempt = this.#watch.observe(statement, Date.parse(entry.sequencedAt));
    if (attempt === undefined) return { groups, answered: undefined, ...(inline === undefined ? {} : { inline }) };
    const again = await this.#answered(attempt, life, sent);
    if (again.group !== undefined) groups.push({ group: again.group, previous: attempt });
    return { groups, answered: again.answered, ...(inline === undefined ? {} : { inline }) };
  }

  /**
   * What the gate does once the sequencer has answered all of one of its
   * attempts: nothing when it admitted the decision or request; when it
   * rejected it, the proposal is decided again as the rulebook says now
   * (a new statement, the current authority index) without repeating what
   * was admitted, unless the policy gives up or the proposal needs nothing
   * more (its final decision is on the log).
   */
  async #answered(attempt: Attempt<string>, life: LifeState, sent: (mark: string) => boolean): Promise<{ group?: SaidGroup; answered: Answered }> {
    const verdict = this.#watch.verdict(attempt);
    if (verdict.kind === 'admitted') return { answered: { attempt, outcome: undefined } };
    if (verdict.kind === 'abandon') {
      const { type, code, detail } = verdict.rejection;
      const message = `gate: could not decide proposal ${attempt.subject.slice(0, 12)}: the sequencer rejected its ${type} (${code}: ${detail}); gave up after ${attempt.number} signing(s): ${verdict.reason}`;
      return { answered: { attempt, outcome: 'abandoned', message } };
    }
    // Answered again in this batch (a sibling's entry) or redelivered: the first reading decides.
    const mark = `again:${attempt.key}:${attempt.number}`;
    if (sent(mark)) return { answered: { attempt, outcome: 'signed_again' } };
    const statements = this.#watch.unadmitted(attempt, (await this.#decideAgain(attempt.subject, life)).flatMap((group) => group.statements));
    if (statements.length === 0) return { answered: { attempt, outcome: 'moot' } };
    return { group: { marks: [mark], statements }, answered: { attempt, outcome: 'signed_again' } };
  }

  /** What a proposal needs from the gate now, by its state: its first decision, its request, its final decision, or nothing. */
  async #decideAgain(proposal: string, life: LifeState): Promise<readonly SaidGroup[]> {
    const waiting = life.proposals.get(proposal);
    if (waiting !== undefined) return this.#firstDecision(waiting, life);
    const open = life.confirmations.get(proposal);
    if (open === undefined) return [];
    if (open.request === null) return decide({ type: 'request', proposal, nowMs: Date.now(), confirmation: this.#confirmation }, life).groups;
    return decide({ type: 'settle', proposal, ...this.#settleFacts(life, proposal) }, life).groups;
  }

  #settleFacts(life: LifeState, proposal: string): { rules: RulesSpec; keyRevoked: boolean; authorityIndex: number } {
    const { state, size } = this.#follower.current();
    const open = life.confirmations.get(proposal);
    const key = open === undefined ? undefined : state.key(open.keyId);
    return { rules: this.#rules, keyRevoked: key?.revokedAt !== undefined, authorityIndex: size };
  }

  async #firstDecision(waiting: WaitingProposal, life: LifeState): Promise<readonly SaidGroup[]> {
    // Never decide on an older registry than the proposal was sequenced against
    // (a gate running apart from the sequencer may lag): verify-chain refuses that.
    if (this.#follower.current().size < waiting.authorityIndex) await this.#follower.waitFor(waiting.authorityIndex, 30_000);
    const step = firstDecisionStep(this.#decideProposal(waiting, Date.now()), life);
    if (step.kind === 'decided') return step.groups;
    return screenedFirstDecision(step, life, await this.#screener.screen(step.input));
  }

  /** The rulebook's command for `waiting`'s first decision, on the grant table and registry this gate holds now. */
  #decideProposal(waiting: WaitingProposal, nowMs: number): Extract<LifeCommand, { type: 'decide_proposal' }> {
    const { state, size } = this.#follower.current();
    const key = state.key(waiting.keyId);
    return {
      type: 'decide_proposal',
      proposal: waiting.hash,
      facts: { gate: this.#gateState as GateState, keyRevoked: key?.revokedAt !== undefined, rules: this.#rules },
      authorityIndex: size,
      nowMs,
      confirmation: this.#confirmation,
    };
  }

  /**
   * The first decision of a proposal that needs nothing asynchronous, for a
   * sequencer in this process to chain in the transaction that admits the
   * proposal ({@link FirstDecider}): the same two steps on the same facts as
   * {@link #firstDecision}, the pre-screen (when the rulebook asks for one)
   * by the same screener, synchronously, when it declares itself
   * deterministic and local (the rules screener); signed with the gate's
   * key, issued at `nowMs`. Undefined when the proposal needs a screener
   * that does I/O (a model endpoint), this gate's registry is behind the
   * proposal's authority index, or deciding throws: the worker decides it
   * when it reads the proposal, as in a split deployment.
   */
  decideAlone(waiting: WaitingProposal, life: LifeState, nowMs: number): readonly InlineStatement[] | undefined {
    if (this.#follower.current().size < waiting.authorityIndex) return undefined;
    let groups: readonly SaidGroup[];
    try {
      const step = firstDecisionStep(this.#decideProposal(waiting, nowMs), life);
      if (step.kind === 'decided') groups = step.groups;
      else if (isLocalScreener(this.#screener)) groups = screenedFirstDecision(step, life, this.#screener.screenNow(step.input));
      else return undefined;
    } catch (err) {
      // What throws here would throw on the worker too, where a failed batch is redelivered; the sequencer's must not be.
      this.#settings.log?.(`gate: could not decide proposal ${waiting.hash.slice(0, 12)} inline (${err instanceof Error ? err.message : String(err)}): left to the gate worker`);
      return undefined;
    }
    if (groups.length === 0) return undefined;
    const signer = this.#settings.gate;
    const vouched = this.#keyIdOwn;
    return groups.flatMap((group) =>
      group.statements.map((said) => {
        const statement = createStatement(said.type, said.body, signer, new Date(nowMs));
        const canonical = canonicalJson(statement);
        const envelope = signCanonicalStatement(statement, canonical, [signer], nodeEd25519);
        return vouched ? { envelope, canonical } : { envelope };
      }),
    );
  }

  /** Counts a committed group by what it settles. */
  #count(group: SaidGroup): void {
    const first = group.marks[0] ?? '';
    // A decision or request signed again is counted by the feedback loop (rejections), not as a new one.
    if (first.startsWith('again:')) return;
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

  #sign(said: Said): Statement {
    return createStatement(said.type, said.body, this.#settings.gate);
  }

  /** The intake record of a statement this gate signed, with the header that lets a restarted gate recall it. */
  #record(statement: Statement, partition: number, place: AttemptPlace): OutRecord {
    const envelope = signStatement(statement, [this.#settings.gate], nodeEd25519);
    return { topic: this.#settings.topics.intake, partition, key: (statement.body as { agentId?: string }).agentId ?? null, value: JSON.stringify(envelope), headers: attemptHeaders(place) };
  }

  /** Stops deciding. */
  async stop(): Promise<void> {
    await this.#subscription?.stop();
    for (const held of this.#writers.values()) await held.writer.close();
  }
}

/** The proposal a group of the gate's statements is about (its decision or request names it). */
function proposalOf(statements: readonly { readonly type: string; readonly body: unknown }[]): string | undefined {
  const about = statements.find((s) => s.type === 'decision.recorded' || s.type === 'confirmation.requested')?.body as { proposal?: unknown } | undefined;
  return typeof about?.proposal === 'string' ? about.proposal : undefined;
}

/** Parses an entry record from the events or authority topic (written by the sequencer). */
export function parseEntry(value: Buffer): Entry {
  return EntrySchema.parse(parseStrictJson(value.toString('utf8'))) as unknown as Entry;
}
