import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';

/** A Bot API method call the fake received. */
export interface BotCall {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

interface SentMessage {
  readonly message_id: number;
  readonly chat: { id: number; type: 'private' };
  readonly text: string;
  readonly reply_markup?: unknown;
}

/**
 * A local Telegram Bot API (https://core.telegram.org/bots/api) speaking its
 * wire shapes: `POST /bot<token>/<method>` with a JSON body, replies
 * `{"ok":true,"result":...}` or `{"ok":false,"error_code","description"}`.
 * getUpdates long-polls (holds the request until an update is queued or
 * `timeout` seconds pass) and, like Telegram, forgets updates below `offset`.
 */
export class FakeTelegram {
  readonly calls: BotCall[] = [];
  readonly sent: SentMessage[] = [];
  readonly events = new EventEmitter();
  /** When true every method answers 502, like a Bot API outage. */
  down = false;
  readonly #token: string;
  readonly #server: Server;
  #updates: { update_id: number; callback_query: unknown }[] = [];
  #nextUpdateId = 100;
  #nextMessageId = 1;
  #nextQueryId = 1;

  constructor(token: string) {
    this.#token = token;
    this.#server = createServer((req, res) => {
    this.#serve(req, res).catch(() => res.destroy());
  });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Queues a button press; resolves with the answerCallbackQuery the bot sends for it. */
  press(userId: number, data: string, message: SentMessage | undefined, username = 'approver'): Promise<Record<string, unknown>> {
    const queryId = String(this.#nextQueryId++);
    const answered = new Promise<Record<string, unknown>>((resolve) => {
      const onCall = (call: BotCall): void => {
        if (call.method === 'answerCallbackQuery' && call.params.callback_query_id === queryId) {
          this.events.off('call', onCall);
          resolve(call.params);
        }
      };
      this.events.on('call', onCall);
    });
    this.#updates.push({
      update_id: this.#nextUpdateId++,
      callback_query: {
        id: queryId,
        from: { id: userId, is_bot: false, first_name: 'A', username },
        chat_instance: '-1',
        ...(message === undefined ? {} : { message }),
        data,
      },
    });
    this.events.emit('update');
    return answered;
  }

  /** The callback_data of a sent message's button (0 approve, 1 deny). */
  static buttonData(message: SentMessage, button: 0 | 1): string {
    const markup = message.reply_markup as { inline_keyboard: { callback_data: string }[][] };
    return (markup.inline_keyboard[0] as { callback_data: string }[])[button]?.callback_data as string;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    if (match === null || match[1] !== this.#token) return send(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    if (this.down) return send(res, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
    const method = match[2] as string;
    const params = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    const call = { method, params };
    this.calls.push(call);
    this.events.emit('call', call);
    switch (method) {
      case 'sendMessage': {
        if (typeof params.text !== 'string' || params.text.length > 4096) return send(res, 400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
        const message: SentMessage = { message_id: this.#nextMessageId++, chat: { id: Number(params.chat_id), type: 'private' }, text: params.text, reply_markup: params.reply_markup };
        this.sent.push(message);
        this.events.emit('sent', message);
        return send(res, 200, { ok: true, result: message });
      }
      case 'getUpdates': {
        const offset = typeof params.offset === 'number' ? params.offset : 0;
        // Telegram: calling getUpdates with an offset confirms (and drops) every update below it.
        this.#updates = this.#updates.filter((u) => u.update_id >= offset);
        if (this.#updates.length === 0) {
          const timeout = typeof params.timeout === 'number' ? params.timeout : 0;
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              this.events.off('update', done);
              resolve();
            };
            const timer = setTimeout(done, timeout * 1000);
            this.events.on('update', done);
            req.once('close', done);
          });
        }
        return send(res, 200, { ok: true, result: this.#updates.filter((u) => u.update_id >= offset) });
      }
      case 'answerCallbackQuery':
      case 'editMessageText':
        return send(res, 200, { ok: true, result: true });
      default:
        return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    }
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
