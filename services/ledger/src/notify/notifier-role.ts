import { LedgerError, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { createStatement, nodeEd25519, signStatement, statementHash, type BodyOf, type Entry, type Signer, type Statement } from '@agent-ledger/core';
import type { InRecord, LogBus, Subscription } from '@agent-ledger/kafka';
import {
  ChannelDown,
  ChatBridge,
  EscalationRouter,
  FailoverNotifier,
  pendingApprovalFrom,
  type AlertChannel,
  type AlertDelivery,
  type ApprovalChannel,
  type EscalationNotice,
  type EscalationRouting,
  type ChannelName,
  type FailoverOptions,
  type PendingApproval,
  type RouteOutcome,
} from '@agent-ledger/channels';
import { parseEntry } from '../gate/gate-worker.js';
import { PendingConfirmations, type PendingConfirmation } from '../gate/pending.js';
import type { TopicNames } from '../topics.js';

/** Settings of the notify role. */
export interface NotifierSettings {
  /** The chat bridge's key (a principal with the approver role): it signs platform-assurance responses. */
  readonly bridge: Signer;
  readonly topics: TopicNames;
  readonly eventPartitions: number;
  readonly channels: readonly ApprovalChannel[];
  readonly order?: readonly ChannelName[];
  readonly sliceMs?: FailoverOptions['sliceMs'];
  /** Who hears which escalation (default: every level follows `order`). */
  readonly escalation?: Omit<EscalationRouting, 'order'>;
  /** On start, escalations raised this recently and not yet recorded as sent are sent (default 15 minutes). */
  readonly escalationResendMs?: number;
  /** Proposals remembered for the requests that will name them (default 50 000, oldest forgotten first). */
  readonly maxProposals?: number;
  readonly log: (message: string) => void;
}

/** A confirmation request still waiting, with the statements a channel shows. */
interface OpenRequest {
  readonly request: Statement<'confirmation.requested'>;
  readonly confirmation: PendingConfirmation;
}

/** An escalation raised on the log and not yet recorded as sent. */
interface RaisedEscalation {
  readonly hash: string;
  readonly partition: number;
  readonly sequencedAtMs: number;
  readonly body: BodyOf<'escalation.raised'>;
}

/** Escalations remembered until their delivery is on the log (oldest forgotten first). */
const MAX_UNSENT_ESCALATIONS = 10_000;

/**
 * The notify role: follows the events stream, and hands every confirmation
 * request still waiting for a human to the configured channels with failover
 * (showing the exact operation of the proposal it names). An answer given on
 * a channel becomes a `human.response` signed by the chat bridge
 * (`assurance: 'platform'`), published to intake on the proposal's ledger
 * partition, where the sequencer admits it like any statement and the gate
 * counts it (or not: see MAX_PLATFORM_ASSURANCE_TIER).
 *
 * On start it folds the whole events log first, so a request already
 * answered, timed out or decided is never sent again; requests still waiting
 * are sent once more (buttons from before a restart are refused as stale).
 *
 * Escalations reach people too: every `escalation.raised` goes out by its
 * level (EscalationRouter: notify to the agent owner's channels, admin to
 * the admins', emergency to every channel at once and the webhook), and each
 * delivery or failure is recorded as a `notification.sent` signed by the
 * bridge key on the escalation's partition. After a restart, recent
 * escalations with no such record are sent again.
 */
export class NotifierRole {
  readonly #bus: LogBus;
  readonly #settings: NotifierSettings;
  readonly #notifier: FailoverNotifier;
  readonly #alerts: EscalationRouter;
  /** Escalations raised and not yet recorded as sent, by statement hash. */
  readonly #unsent = new Map<string, RaisedEscalation>();
  /** Escalations being delivered now. */
  readonly #alerting = new Set<string>();
  readonly #bridge: ChatBridge;
  readonly #pending = new PendingConfirmations();
  readonly #proposals = new Map<string, Statement<'proposal.submitted'>>();
  /** Requests still waiting, by proposal hash. */
  readonly #open = new Map<string, OpenRequest>();
  /** Requests being routed now, by request hash. */
  readonly #routing = new Set<string>();
  /** Per Kafka partition of the events topic, the next offset not yet folded. */
  readonly #folded = new Map<number, bigint>();
  readonly #inFlight = new Set<Promise<void>>();
  #subscription: Subscription | undefined;
  #stopped = false;
  /** Request hashes routed on start because the log left them waiting (what a restart re-sends). */
  readonly resumed: string[] = [];
  readonly counters = { routed: 0, answered: 0, published: 0, unanswered: 0, notPublished: 0, refused: 0, escalations: 0, alertsDelivered: 0, alertsFailed: 0 };
  /** Escalation hashes sent on start because the log had no delivery record for them. */
  readonly resumedEscalations: string[] = [];

  constructor(bus: LogBus, settings: NotifierSettings) {
    this.#bus = bus;
    this.#settings = settings;
    this.#bridge = new ChatBridge({ signer: settings.bridge });
    const guarded = settings.channels.map((channel) => this.#guard(channel));
    this.#notifier = new FailoverNotifier({
      channels: guarded,
      ...(settings.order === undefined ? {} : { order: settings.order }),
      ...(settings.sliceMs === undefined ? {} : { sliceMs: settings.sliceMs }),
    });
    const alertChannels = settings.channels.filter((c): c is ApprovalChannel & AlertChannel => typeof (c as Partial<AlertChannel>).alert === 'function');
    this.#alerts = new EscalationRouter(alertChannels, { ...settings.escalation, ...(settings.order === undefined ? {} : { order: settings.order }) });
    for (const channel of settings.channels) {
      channel.onRefusal((refusal) => {
        this.counters.refused += 1;
        settings.log(`notify: ${refusal.channel} refused an answer from ${refusal.platformIdentity ?? 'unknown'}: ${refusal.code}: ${refusal.detail}`);
      });
    }
  }

  /** Folds the events log up to its current end, routes what is still waiting, then follows new entries. */
  async start(groupId: string): Promise<void> {
    const events = this.#settings.topics.events;
    for (let kp = 0; kp < this.#settings.eventPartitions; kp++) {
      for await (const record of this.#bus.readRange(events, kp, '0')) this.#fold(record, false);
    }
    const now = Date.now();
    for (const open of this.#open.values()) {
      if (open.confirmation.deadlineMs <= now) continue;
      this.resumed.push(open.confirmation.request);
      this.#route(open);
    }
    const resendMs = this.#settings.escalationResendMs ?? 15 * 60_000;
    for (const raised of [...this.#unsent.values()]) {
      if (now - raised.sequencedAtMs > resendMs) continue;
      this.resumedEscalations.push(raised.hash);
      this.#alert(raised);
    }
    this.#subscription = await this.#bus.subscribe({
      groupId,
      topics: [events],
      fromBeginning: true,
      commitOffsets: true,
      onBatch: async (batch) => {
        for (const record of batch.records) this.#fold(record, true);
      },
      onError: (error, stopped) => this.#settings.log(`notify: events consumer ${stopped ? 'stopped' : 'error'}: ${error.code}: ${error.message}`),
    });
  }

  /** Folds one committed events record; when `live`, routes a new request. Records already folded are skipped. */
  #fold(record: InRecord, live: boolean): void {
    const offset = BigInt(record.offset);
    if (offset < (this.#folded.get(record.partition) ?? 0n)) return;
    this.#folded.set(record.partition, offset + 1n);
    let entry;
    try {
      entry = parseEntry(record.value);
    } catch (cause) {
      // The sequencer wrote it, but the record is still outside input: refuse it here, keep following.
      this.#settings.log(`notify: ${ReasonCode.SCHEMA_INVALID}: unreadable entry at events/${record.partition}@${record.offset}: ${(cause as Error).message}`);
      return;
    }
    const statement = entry.envelope.statement;
    const hash = statementHash(statement);
    if (statement.type === 'proposal.submitted') this.#rememberProposal(hash, statement as Statement<'proposal.submitted'>);
    if (statement.type === 'escalation.raised') this.#raised(entry, hash, live);
    if (statement.type === 'notification.sent') this.#unsent.delete((statement.body as BodyOf<'notification.sent'>).escalation);
    const touched = this.#pending.evolve(entry, hash);
    if (statement.type === 'confirmation.requested' && touched !== undefined && touched.request === hash) {
      const open = { request: statement as Statement<'confirmation.requested'>, confirmation: touched };
      this.#open.set(touched.proposal, open);
      if (live) this.#route(open);
    } else if (touched !== undefined && !this.#waiting(touched)) {
      this.#open.delete(touched.proposal);
    }
  }

  /** Remembers an escalation until its delivery is on the log; when `live`, sends it now. */
  #raised(entry: Entry, hash: string, live: boolean): void {
    const raised: RaisedEscalation = { hash, partition: entry.partition, sequencedAtMs: Date.parse(entry.sequencedAt), body: entry.envelope.statement.body as BodyOf<'escalation.raised'> };
    this.#unsent.set(hash, raised);
    if (this.#unsent.size > MAX_UNSENT_ESCALATIONS) {
      const oldest = this.#unsent.keys().next();
      if (oldest.done !== true) this.#unsent.delete(oldest.value);
    }
    if (live) this.#alert(raised);
  }

  /** Delivers one escalation by its level (in the background) and records every delivery or failure. */
  #alert(raised: RaisedEscalation): void {
    if (this.#stopped || this.#alerting.has(raised.hash)) return;
    this.#alerting.add(raised.hash);
    this.counters.escalations += 1;
    const proposal = this.#proposals.get(raised.body.proposal);
    const p = proposal?.body;
    const notice: EscalationNotice = {
      agentId: raised.body.agentId,
      proposal: raised.body.proposal,
      escalation: raised.hash,
      level: raised.body.level,
      reason: raised.body.reason,
      operation: p === undefined ? null : { tool: p.tool, actionType: p.actionType, targetResource: p.targetResource, recipient: p.recipient, scope: p.scope, args: p.args },
    };
    const task = this.#alerts
      .route(notice)
      .then((deliveries) => this.#record(raised, deliveries))
      .catch((error: unknown) => this.#settings.log(`notify: escalation ${raised.hash.slice(0, 12)} not recorded: ${(error as Error).message}`))
      .finally(() => {
        this.#alerting.delete(raised.hash);
        this.#inFlight.delete(task);
      });
    this.#inFlight.add(task);
  }

  /** Signs one `notification.sent` per delivery and publishes them to intake on the escalation's partition. */
  async #record(raised: RaisedEscalation, deliveries: readonly AlertDelivery[]): Promise<void> {
    const short = raised.hash.slice(0, 12);
    const bridge = this.#settings.bridge;
    const records = deliveries.map((d) => {
      if (d.ok) this.counters.alertsDelivered += 1;
      else this.counters.alertsFailed += 1;
      const body: BodyOf<'notification.sent'> = {
        agentId: raised.body.agentId, proposal: raised.body.proposal, escalation: raised.hash, level: raised.body.level, channel: d.channel, ok: d.ok, detail: d.detail,
      };
      const envelope = signStatement(createStatement('notification.sent', body, bridge), [bridge], nodeEd25519);
      return { topic: this.#settings.topics.intake, partition: raised.partition, key: raised.body.agentId, value: JSON.stringify(envelope) };
    });
    const summary = deliveries.map((d) => `${d.channel}:${d.ok ? 'ok' : d.detail}`).join(' ');
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#bus.publish(records);
        break;
      } catch (error) {
        const retryable = (error instanceof LedgerError || error instanceof OperationalError) && error.retryable;
        if (!retryable || attempt >= 5 || this.#stopped) {
          this.#settings.log(`notify: ${raised.body.level} escalation ${short} delivered (${summary}) but not recorded: ${(error as Error).message}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    this.#settings.log(`notify: ${raised.body.level} escalation ${short} for ${raised.body.agentId}: ${summary}`);
  }

  #rememberProposal(hash: string, proposal: Statement<'proposal.submitted'>): void {
    this.#proposals.set(hash, proposal);
    const max = this.#settings.maxProposals ?? 50_000;
    if (this.#proposals.size > max) {
      const oldest = this.#proposals.keys().next();
      if (oldest.done !== true) this.#proposals.delete(oldest.value);
    }
  }

  /** Whether a confirmation still waits for a human (not answered, timed out or decided). */
  #waiting(confirmation: PendingConfirmation): boolean {
    return confirmation.status === 'pending' && !confirmation.decided && !confirmation.timeoutRecorded;
  }

  /** Starts routing one request (in the background: routing lasts until an answer or the deadline). */
  #route(open: OpenRequest): void {
    const requestHash = open.confirmation.request;
    if (this.#stopped || this.#routing.has(requestHash)) return;
    const proposal = this.#proposals.get(open.confirmation.proposal);
    if (proposal === undefined) {
      // Never ask about an operation we cannot show exactly.
      this.#settings.log(`notify: ${ReasonCode.INTEGRITY_FAILURE}: request ${requestHash.slice(0, 12)} names a proposal not in memory; not routed (answer by CLI or web page)`);
      return;
    }
    let pending: PendingApproval;
    try {
      pending = pendingApprovalFrom(open.request, proposal);
    } catch (error) {
      this.#settings.log(`notify: request ${requestHash.slice(0, 12)} refused: ${error instanceof LedgerError ? error.code : ReasonCode.SCHEMA_INVALID}: ${(error as Error).message}`);
      return;
    }
    this.#routing.add(requestHash);
    this.counters.routed += 1;
    const task = this.#notifier
      .route(pending)
      .then((outcome) => this.#settle(open, pending, outcome))
      .catch((error: unknown) => this.#settings.log(`notify: routing ${requestHash.slice(0, 12)} failed: ${(error as Error).message}`))
      .finally(() => {
        this.#routing.delete(requestHash);
        this.#inFlight.delete(task);
      });
    this.#inFlight.add(task);
  }

  /** Turns a routed request's outcome into a signed response on intake, if there is one to give. */
  async #settle(open: OpenRequest, pending: PendingApproval, outcome: RouteOutcome): Promise<void> {
    const short = pending.request.slice(0, 12);
    const tried = outcome.attempts.map((a) => `${a.channel}:${a.outcome}`).join(' ');
    if (outcome.status === 'unanswered') {
      this.counters.unanswered += 1;
      this.#settings.log(`notify: request ${short} unanswered on chat channels (${outcome.code}; ${tried || 'no channel configured'})`);
      return;
    }
    this.counters.answered += 1;
    if (this.#stopped || !this.#waiting(open.confirmation)) {
      this.counters.notPublished += 1;
      this.#settings.log(`notify: request ${short} was settled on the log before the ${outcome.answer.channel} answer; not published`);
      return;
    }
    let envelope;
    try {
      envelope = this.#bridge.respond(pending, outcome.answer);
    } catch (error) {
      this.counters.notPublished += 1;
      this.#settings.log(`notify: answer to ${short} not signed: ${error instanceof LedgerError ? error.code : ReasonCode.SCHEMA_INVALID}: ${(error as Error).message}`);
      return;
    }
    const record = { topic: this.#settings.topics.intake, partition: open.confirmation.partition, key: pending.agentId, value: JSON.stringify(envelope) };
    // The same intake partition the API would use: the proposal's ledger partition.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#bus.publish([record]);
        break;
      } catch (error) {
        const retryable = (error instanceof LedgerError || error instanceof OperationalError) && error.retryable;
        if (!retryable || attempt >= 5 || Date.now() >= Date.parse(pending.deadline) || this.#stopped) {
          this.counters.notPublished += 1;
          this.#settings.log(`notify: answer to ${short} not published: ${(error as Error).message}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
    this.counters.published += 1;
    this.#settings.log(`notify: ${outcome.answer.answer} for ${short} from ${outcome.answer.platformIdentity} via ${outcome.deliveredBy} (${tried}), signed by ${this.#settings.bridge.principal}`);
  }

  /**
   * A channel that refuses (as down) to deliver a request the log has already
   * settled, so failover stops paging people once an approver answered
   * elsewhere (the CLI, the web page, another channel).
   */
  #guard(channel: ApprovalChannel): ApprovalChannel {
    return {
      name: channel.name,
      notify: async (pending) => {
        const open = this.#open.get(pending.proposal);
        if (this.#stopped || open === undefined || open.confirmation.request !== pending.request || !this.#waiting(open.confirmation)) {
          throw new ChannelDown(channel.name, 'the request is no longer waiting');
        }
        await channel.notify(pending);
      },
      onAnswer: (listener) => channel.onAnswer(listener),
      onRefusal: (listener) => channel.onRefusal(listener),
    };
  }

  /** Requests being routed now. */
  get routing(): number {
    return this.#routing.size;
  }

  /** Stops following the log; requests being routed end at their deadline at the latest, and publish nothing more. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#subscription?.stop();
  }
}
