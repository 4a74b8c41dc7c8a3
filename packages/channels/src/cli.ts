import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { ChannelEvents } from './channel-events.js';
import { ChannelDown } from './errors.js';
import { OutstandingRequests } from './outstanding.js';
import { describePendingApproval } from './pending-approval.js';
import { describeEscalation } from './escalation.js';
import type { AlertChannel, ApprovalChannel, EscalationNotice, PendingApproval } from './types.js';

/** Options of {@link CliChannel}. */
export interface CliOptions {
  /** Where the operator types answers (a terminal's stdin). */
  readonly input: Readable;
  /** Where pending approvals are printed (a terminal's stdout). */
  readonly output: Writable;
  /** Who sits at this terminal (recorded as `cli:<operator>`). */
  readonly operator: string;
  readonly now?: () => number;
}

const ANSWER_LINE = /^\s*(approve|deny)\s+([A-Za-z0-9_-]{16})\s*$/;
const OPERATOR = /^[A-Za-z0-9._@-]{1,128}$/;

/**
 * Terminal channel: prints each pending approval with a short id and reads
 * `approve <id>` / `deny <id>` lines. The terminal vouches for the operator,
 * so its answers are platform-assurance answers like a chat's.
 */
export class CliChannel extends ChannelEvents implements ApprovalChannel, AlertChannel {
  readonly name = 'cli' as const;
  readonly #options: CliOptions;
  readonly #outstanding: OutstandingRequests<null>;
  readonly #lines: Interface;

  constructor(options: CliOptions) {
    super();
    if (!OPERATOR.test(options.operator)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'operator must be 1-128 of [A-Za-z0-9._@-]');
    this.#options = options;
    this.#outstanding = new OutstandingRequests({ now: options.now ?? Date.now });
    this.#lines = createInterface({ input: options.input, crlfDelay: Infinity });
    this.#lines.on('line', (line) => this.#onLine(line));
  }

  /** Prints the pending approval. @throws ChannelDown when the terminal is gone. */
  async notify(pending: PendingApproval): Promise<void> {
    const { output, input } = this.#options;
    if (!output.writable || input.readableEnded || input.destroyed) throw new ChannelDown(this.name, 'no terminal attached');
    const entry = this.#outstanding.issue(pending);
    const text = `${describePendingApproval(pending)}\nanswer: approve ${entry.shortId} | deny ${entry.shortId}\n\n`;
    await new Promise<void>((resolve, reject) => {
      output.write(text, (error) => (error ? reject(new ChannelDown(this.name, 'terminal write failed', { cause: error })) : resolve()));
    }).catch((error: unknown) => {
      this.#outstanding.discard(entry.shortId);
      throw error;
    });
  }

  /** Prints an escalation notice. @throws ChannelDown when the terminal is gone. */
  async alert(notice: EscalationNotice): Promise<void> {
    const { output } = this.#options;
    if (!output.writable) throw new ChannelDown(this.name, 'no terminal attached');
    await new Promise<void>((resolve, reject) => {
      output.write(`${describeEscalation(notice)}\n\n`, (error) => (error ? reject(new ChannelDown(this.name, 'terminal write failed', { cause: error })) : resolve()));
    });
  }

  /** Stops reading answers. */
  close(): void {
    this.#lines.close();
  }

  #onLine(line: string): void {
    if (line.trim() === '') return;
    const identity = `cli:${this.#options.operator}`;
    const match = ANSWER_LINE.exec(line);
    if (match === null) {
      this.emitRefusal({ channel: this.name, code: ReasonCode.SCHEMA_INVALID, platformIdentity: identity, detail: 'expected "approve <id>" or "deny <id>"' });
      return;
    }
    const settled = this.#outstanding.settle(match[2] as string);
    if (!settled.ok) {
      this.emitRefusal({ channel: this.name, code: settled.code, platformIdentity: identity, detail: settled.detail });
      return;
    }
    this.emitAnswer({ channel: this.name, request: settled.entry.pending.request, answer: match[1] as 'approve' | 'deny', platformIdentity: identity });
  }
}
