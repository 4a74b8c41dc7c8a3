import { ReasonCode } from '@agent-ledger/refusals';
import { ChannelEvents } from './channel-events.js';
import { ChannelDown } from './errors.js';
import { OutstandingRequests, SHORT_ID_PATTERN } from './outstanding.js';
import { describePendingApproval } from './pending-approval.js';
import { asObject, postJson } from './platform-http.js';
import { describeEscalation } from './escalation.js';
import type { AlertChannel, ApprovalChannel, EscalationNotice, PendingApproval } from './types.js';

/** Options of {@link TelegramChannel}. */
export interface TelegramOptions {
  /** Bot API base URL (default https://api.telegram.org). */
  readonly apiBase?: string;
  /** The bot token (from @BotFather). */
  readonly token: string;
  /** Chat the approval messages go to. */
  readonly chatId: number | string;
  /** Telegram user ids whose button presses count. Everyone else is refused. */
  readonly allowedUserIds: readonly number[];
  /** getUpdates long-poll timeout in seconds (default 25). */
  readonly pollTimeoutSeconds?: number;
  /** Timeout of every other Bot API call in ms (default 10 000). */
  readonly requestTimeoutMs?: number;
  /** Pause after a failed getUpdates before the next one, in ms (default 1000). */
  readonly retryDelayMs?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** Telegram's reference to a sent message. */
interface TelegramMessageRef {
  readonly chatId: number | string;
  readonly messageId: number;
}

/** Callback data this channel puts on its buttons: `a:<shortId>` (approve) or `d:<shortId>` (deny). */
const CALLBACK_DATA = /^([ad]):([A-Za-z0-9_-]{16})$/;

/**
 * Approval channel over the Telegram Bot API
 * (https://core.telegram.org/bots/api): each pending approval is a
 * `sendMessage` with an inline keyboard (Approve / Deny, `callback_data` =
 * answer + short request id); presses arrive as `callback_query` updates
 * fetched by `getUpdates` long polling; each is acknowledged with
 * `answerCallbackQuery`, and an accepted answer edits the message
 * (`editMessageText`, which also removes the keyboard).
 *
 * Callback queries are untrusted: only users in the allowed list count, data
 * must be one this process issued for that very message, and an id counts once.
 */
export class TelegramChannel extends ChannelEvents implements ApprovalChannel, AlertChannel {
  readonly name = 'telegram' as const;
  readonly #apiBase: string;
  readonly #options: TelegramOptions;
  readonly #allowed: ReadonlySet<number>;
  readonly #fetch: typeof fetch;
  readonly #outstanding: OutstandingRequests<TelegramMessageRef>;
  readonly #stop = new AbortController();
  #offset = 0;
  #loop: Promise<void> | null = null;

  constructor(options: TelegramOptions) {
    super();
    this.#options = options;
    this.#apiBase = (options.apiBase ?? 'https://api.telegram.org').replace(/\/+$/, '');
    this.#allowed = new Set(options.allowedUserIds);
    this.#fetch = options.fetch ?? fetch;
    this.#outstanding = new OutstandingRequests({ now: options.now ?? Date.now });
  }

  /** Sends the approval message with its Approve / Deny keyboard. @throws ChannelDown */
  async notify(pending: PendingApproval): Promise<void> {
    const entry = this.#outstanding.issue(pending);
    try {
      const result = await this.#call('sendMessage', {
        chat_id: this.#options.chatId,
        text: describePendingApproval(pending),
        reply_markup: {
          inline_keyboard: [
            [
              { text: 'Approve', callback_data: `a:${entry.shortId}` },
              { text: 'Deny', callback_data: `d:${entry.shortId}` },
            ],
          ],
        },
      });
      const message = asObject(result);
      const chat = asObject(message?.chat);
      if (typeof message?.message_id !== 'number' || (typeof chat?.id !== 'number' && typeof chat?.id !== 'string')) {
        throw new ChannelDown(this.name, 'sendMessage returned no message');
      }
      entry.ref = { chatId: chat.id, messageId: message.message_id };
    } catch (error) {
      this.#outstanding.discard(entry.shortId);
      throw error;
    }
  }

  /** Sends an escalation notice as a plain message (no buttons: nothing to answer). @throws ChannelDown */
  async alert(notice: EscalationNotice): Promise<void> {
    const result = asObject(await this.#call('sendMessage', { chat_id: this.#options.chatId, text: describeEscalation(notice) }));
    if (typeof result?.message_id !== 'number') throw new ChannelDown(this.name, 'sendMessage returned no message');
  }

  /** Starts receiving button presses (getUpdates long polling). Idempotent. */
  start(): void {
    this.#loop ??= this.#poll();
  }

  /** Stops polling and waits for the loop to end. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #poll(): Promise<void> {
    const timeout = this.#options.pollTimeoutSeconds ?? 25;
    while (!this.#stop.signal.aborted) {
      let updates: unknown;
      try {
        updates = await this.#call(
          'getUpdates',
          { offset: this.#offset, timeout, allowed_updates: ['callback_query'] },
          timeout * 1000 + (this.#options.requestTimeoutMs ?? 10_000),
        );
      } catch {
        if (this.#stop.signal.aborted) return;
        await pause(this.#options.retryDelayMs ?? 1000, this.#stop.signal);
        continue;
      }
      if (!Array.isArray(updates)) continue;
      for (const value of updates) {
        const update = asObject(value);
        if (update === undefined || !Number.isSafeInteger(update.update_id)) continue;
        // Acknowledge every update, even one we refuse, so it is never fetched again (Bot API getUpdates, `offset`).
        this.#offset = Math.max(this.#offset, (update.update_id as number) + 1);
        const query = asObject(update.callback_query);
        if (query !== undefined) await this.#onCallbackQuery(query);
      }
    }
  }

  /** Handles one `callback_query` (untrusted: any Telegram user can press a button it sees). */
  async #onCallbackQuery(query: Readonly<Record<string, unknown>>): Promise<void> {
    const queryId = query.id;
    const from = asObject(query.from);
    if (typeof queryId !== 'string' || typeof from?.id !== 'number' || !Number.isSafeInteger(from.id)) return;
    const identity = `telegram:${from.id}`;
    const refuse = async (code: ReasonCode, detail: string, reply: string): Promise<void> => {
      this.emitRefusal({ channel: this.name, code, platformIdentity: identity, detail });
      await this.#bestEffort('answerCallbackQuery', { callback_query_id: queryId, text: reply, show_alert: true });
    };
    if (!this.#allowed.has(from.id)) return refuse(ReasonCode.POLICY_VIOLATION, 'user is not on the allowed list', 'You are not allowed to answer this request.');
    const match = typeof query.data === 'string' ? CALLBACK_DATA.exec(query.data) : null;
    if (match === null) return refuse(ReasonCode.SCHEMA_INVALID, 'malformed callback data', 'Unknown request.');
    const [, answerLetter, shortId] = match as unknown as [string, 'a' | 'd', string];
    const entry = SHORT_ID_PATTERN.test(shortId) ? this.#outstanding.peek(shortId) : undefined;
    const message = asObject(query.message);
    const chat = asObject(message?.chat);
    if (entry !== undefined && entry.ref !== null && (message?.message_id !== entry.ref.messageId || chat?.id !== entry.ref.chatId)) {
      // The data was issued for another message: not a press of the button this process sent.
      return refuse(ReasonCode.INTEGRITY_FAILURE, 'callback data does not belong to this message', 'Unknown request.');
    }
    const settled = this.#outstanding.settle(shortId);
    if (!settled.ok) return refuse(settled.code, settled.detail, 'This request is no longer pending.');
    const answer = answerLetter === 'a' ? 'approve' : 'deny';
    this.emitAnswer({ channel: this.name, request: settled.entry.pending.request, answer, platformIdentity: identity });
    const verdict = answer === 'approve' ? 'Approved' : 'Denied';
    await this.#bestEffort('answerCallbackQuery', { callback_query_id: queryId, text: verdict });
    const ref = settled.entry.ref;
    if (ref !== null) {
      const who = typeof from.username === 'string' ? `@${from.username}` : identity;
      await this.#bestEffort('editMessageText', {
        chat_id: ref.chatId,
        message_id: ref.messageId,
        text: `${describePendingApproval(settled.entry.pending)}\n\n${verdict} by ${who}`,
      });
    }
  }

  /** Calls a Bot API method; returns its `result`. @throws ChannelDown */
  async #call(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    const reply = await postJson({
      channel: this.name,
      url: `${this.#apiBase}/bot${this.#options.token}/${method}`,
      body: JSON.stringify(params),
      timeoutMs: timeoutMs ?? this.#options.requestTimeoutMs ?? 10_000,
      fetch: this.#fetch,
      signal: this.#stop.signal,
    });
    const body = asObject(reply.body);
    if (body?.ok !== true) {
      const description = typeof body?.description === 'string' ? body.description.slice(0, 200) : `HTTP ${reply.status}`;
      throw new ChannelDown(this.name, `${method} failed: ${description}`);
    }
    return body.result;
  }

  /** Acknowledgements and edits are courtesy: the answer is already recorded, so their failure changes nothing. */
  async #bestEffort(method: string, params: Record<string, unknown>): Promise<void> {
    try {
      await this.#call(method, params);
    } catch {
      /* see above */
    }
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
