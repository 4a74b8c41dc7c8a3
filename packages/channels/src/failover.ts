import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { ApprovalChannel, ChannelAnswer, ChannelName, PendingApproval } from './types.js';

/** Default failover order (the product issue): Telegram, then Discord, then the terminal, then a webhook as last resort. */
export const DEFAULT_FAILOVER_ORDER: readonly ChannelName[] = Object.freeze(['telegram', 'discord', 'cli', 'webhook']);

/** Options of {@link FailoverNotifier}. */
export interface FailoverOptions {
  /** The channels available; those not named in `order` are not used. */
  readonly channels: readonly ApprovalChannel[];
  /** Order to try them in (default {@link DEFAULT_FAILOVER_ORDER}). */
  readonly order?: readonly ChannelName[];
  /**
   * How long each channel has to be answered before the next one is tried, in
   * ms: one number for all, or per channel. Default: the time left to the
   * deadline split evenly over the channels not yet tried. The last channel
   * tried always waits until the deadline.
   */
  readonly sliceMs?: number | Readonly<Partial<Record<ChannelName, number>>>;
  readonly now?: () => number;
}

/** What happened on one channel while routing one request. */
export interface RouteAttempt {
  readonly channel: ChannelName;
  /**
   * `absent`: named in the order but not configured; `down`: notify failed (or did not finish within the
   * slice); `unanswered`: delivered, no answer within the slice; `notified`: the channel the notifier was
   * on when the answer came.
   */
  readonly outcome: 'absent' | 'down' | 'unanswered' | 'notified';
  /** ReasonCode of a failure, null otherwise. */
  readonly code: ReasonCode | null;
}

/**
 * The result of routing one pending approval. The notifier never answers on
 * anyone's behalf: without a human answer the outcome is `unanswered` with
 * NO_CHANNEL (no channel could deliver) or TIMEOUT (delivered, nobody
 * answered by the deadline), and the timer signs the timeout.
 */
export type RouteOutcome =
  | { readonly status: 'answered'; readonly answer: ChannelAnswer; readonly deliveredBy: ChannelName; readonly attempts: readonly RouteAttempt[] }
  | { readonly status: 'unanswered'; readonly code: typeof ReasonCode.NO_CHANNEL | typeof ReasonCode.TIMEOUT; readonly attempts: readonly RouteAttempt[] };

/**
 * Routes a pending approval through channels in a configured order: tries
 * the next channel when one is down (notify throws) or unanswered within its
 * slice of the time to the deadline. An answer from any channel already
 * notified counts, including one the notifier has moved past; the first
 * answer wins and the channel it came through is recorded.
 */
export class FailoverNotifier {
  readonly #byName: ReadonlyMap<ChannelName, ApprovalChannel>;
  readonly #order: readonly ChannelName[];
  readonly #sliceMs: FailoverOptions['sliceMs'];
  readonly #now: () => number;

  constructor(options: FailoverOptions) {
    const byName = new Map<ChannelName, ApprovalChannel>();
    for (const channel of options.channels) {
      if (byName.has(channel.name)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `two channels are named ${channel.name}`);
      byName.set(channel.name, channel);
    }
    const order = options.order ?? DEFAULT_FAILOVER_ORDER;
    if (new Set(order).size !== order.length) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'the failover order names a channel twice');
    this.#byName = byName;
    this.#order = order;
    this.#sliceMs = options.sliceMs;
    this.#now = options.now ?? Date.now;
  }

  /** Routes one pending approval until a human answers, every channel has had its turn, or the deadline passes. */
  async route(pending: PendingApproval): Promise<RouteOutcome> {
    const deadline = Date.parse(pending.deadline);
    const attempts: RouteAttempt[] = [];
    const answered = new Deferred<ChannelAnswer>();
    const unsubscribe: (() => void)[] = [];
    // Listen before the first notify: an answer can come back before notify returns.
    for (const channel of this.#byName.values()) {
      unsubscribe.push(channel.onAnswer((answer) => {
        if (answer.request === pending.request) answered.resolve(answer);
      }));
    }
    try {
      const candidates = this.#order.filter((name) => {
        if (this.#byName.has(name)) return true;
        attempts.push({ channel: name, outcome: 'absent', code: ReasonCode.NO_CHANNEL });
        return false;
      });
      let delivered = false;
      for (let i = 0; i < candidates.length; i++) {
        const name = candidates[i] as ChannelName;
        const channel = this.#byName.get(name) as ApprovalChannel;
        const remaining = deadline - this.#now();
        if (remaining <= 0) break;
        const last = i === candidates.length - 1;
        const slice = last ? remaining : Math.min(remaining, this.#slice(name, remaining, candidates.length - i));
        const sliceTimer = new Timer(slice);
        try {
          const notified = await Promise.race([
            channel.notify(pending).then(() => 'notified' as const, (error: unknown) => error),
            sliceTimer.done.then(() => 'slow' as const),
            answered.promise.then(() => 'answered' as const),
          ]);
          if (notified === 'answered') {
            // The answer can beat notify's own return (a platform may deliver the press before it acknowledges the send).
            attempts.push({ channel: name, outcome: 'notified', code: null });
            delivered = true;
            break;
          }
          if (notified !== 'notified') {
            const code = notified instanceof LedgerError ? notified.code : ReasonCode.NO_CHANNEL;
            attempts.push({ channel: name, outcome: 'down', code });
            continue;
          }
          delivered = true;
          const heard = await Promise.race([sliceTimer.done.then(() => false), answered.promise.then(() => true)]);
          attempts.push({ channel: name, outcome: heard ? 'notified' : 'unanswered', code: heard ? null : ReasonCode.TIMEOUT });
          if (heard) break;
        } finally {
          sliceTimer.cancel();
        }
      }
      if (!answered.settled && delivered) {
        // Every channel had its turn; earlier ones may still be answered until the deadline.
        const rest = new Timer(Math.max(0, deadline - this.#now()));
        try {
          await Promise.race([rest.done, answered.promise]);
        } finally {
          rest.cancel();
        }
      }
      if (answered.value !== undefined) {
        return { status: 'answered', answer: answered.value, deliveredBy: answered.value.channel, attempts };
      }
      return { status: 'unanswered', code: delivered ? ReasonCode.TIMEOUT : ReasonCode.NO_CHANNEL, attempts };
    } finally {
      for (const off of unsubscribe) off();
    }
  }

  #slice(name: ChannelName, remaining: number, channelsLeft: number): number {
    const configured = this.#sliceMs;
    if (typeof configured === 'number') return configured;
    const own = configured?.[name];
    if (own !== undefined) return own;
    return Math.floor(remaining / channelsLeft);
  }
}

/** A promise with its resolver, remembering its value. */
class Deferred<T> {
  readonly promise: Promise<T>;
  value: T | undefined;
  settled = false;
  #resolve!: (value: T) => void;

  constructor() {
    this.promise = new Promise<T>((resolve) => {
      this.#resolve = resolve;
    });
  }

  resolve(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.value = value;
    this.#resolve(value);
  }
}

/** A cancellable delay. */
class Timer {
  readonly done: Promise<void>;
  #handle: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.done = new Promise((resolve) => {
      this.#handle = setTimeout(resolve, ms);
    });
  }

  cancel(): void {
    clearTimeout(this.#handle);
  }
}
