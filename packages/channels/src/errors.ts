import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/**
 * A channel could not deliver a pending approval (its platform refused the
 * request, was unreachable, or answered garbage). Retryable: the notifier
 * moves on to the next channel, and the same channel may work next time.
 */
export class ChannelDown extends LedgerError<typeof ReasonCode.NO_CHANNEL> {
  /** Name of the channel that failed. */
  readonly channel: string;

  constructor(channel: string, message: string, options: { cause?: unknown } = {}) {
    super(ReasonCode.NO_CHANNEL, `${channel}: ${message}`, { cause: options.cause, retryable: true });
    this.name = 'ChannelDown';
    this.channel = channel;
  }
}
