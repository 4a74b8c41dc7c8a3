import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  CliChannel,
  DiscordChannel,
  TelegramChannel,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookChannel,
  type ApprovalChannel,
} from '@agent-ledger/channels';
import type { ChannelsConfig } from './channels-config.js';

/** Largest webhook answer body read (the channel refuses more than 16 KiB anyway). */
const MAX_CALLBACK_BODY = 64 * 1024;
/** Route receivers POST signed answers to. */
export const WEBHOOK_CALLBACK_PATH = '/v1/webhook/answers';

/** The channels built from the configuration, with their listeners, and how to stop them. */
export interface ConfiguredChannels {
  readonly channels: readonly ApprovalChannel[];
  /** URL of the webhook answer endpoint, when one listens. */
  readonly webhookCallbackUrl: string | undefined;
  /** Port of the Discord interactions endpoint, when Discord is configured. */
  readonly discordPort: number | undefined;
  close(): Promise<void>;
}

/**
 * Builds the configured channels and starts what receives answers: Telegram
 * long polling, the Discord interactions endpoint, the webhook answer
 * endpoint. The terminal channel is added only when this process has an
 * interactive terminal (stdin is a TTY); its operator is the OS user.
 */
export async function startConfiguredChannels(config: ChannelsConfig | undefined, log: (message: string) => void): Promise<ConfiguredChannels> {
  const channels: ApprovalChannel[] = [];
  const closers: (() => Promise<void>)[] = [];
  let webhookCallbackUrl: string | undefined;
  let discordPort: number | undefined;
  try {
    if (config?.telegram !== undefined) {
      const telegram = new TelegramChannel({ ...config.telegram });
      telegram.start();
      channels.push(telegram);
      closers.push(() => telegram.close());
    }
    if (config?.discord !== undefined) {
      const { listenPort, ...rest } = config.discord;
      const discord = new DiscordChannel({ ...rest, port: listenPort });
      discordPort = await discord.listen();
      channels.push(discord);
      closers.push(() => discord.close());
      log(`notify: discord interactions endpoint on 127.0.0.1:${discordPort}`);
    }
    if (config?.webhook !== undefined) {
      const webhook = new WebhookChannel({ url: config.webhook.url, secret: config.webhook.secret });
      channels.push(webhook);
      if (config.webhook.listenPort === undefined) {
        log('notify: webhook has no listenPort: pending approvals are POSTed, answers cannot come back by webhook');
      } else {
        const server = await listenForWebhookAnswers(webhook, config.webhook.listenPort);
        webhookCallbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${WEBHOOK_CALLBACK_PATH}`;
        closers.push(() => closeServer(server));
        log(`notify: webhook answers accepted at ${webhookCallbackUrl}`);
      }
    }
    if (process.stdin.isTTY === true) {
      const operator = userInfo().username.replace(/[^A-Za-z0-9._@-]/g, '_').slice(0, 128) || 'operator';
      const cli = new CliChannel({ input: process.stdin, output: process.stdout, operator });
      channels.push(cli);
      closers.push(async () => cli.close());
    }
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    throw error;
  }
  return {
    channels,
    webhookCallbackUrl,
    discordPort,
    close: async () => {
      for (const close of closers.reverse()) await close().catch((err: unknown) => log(`notify: closing a channel: ${(err as Error).message}`));
    },
  };
}

/**
 * Serves `POST /v1/webhook/answers` on 127.0.0.1: the raw body and its
 * `x-ledger-signature` go to WebhookChannel.handleCallback (HMAC first, in
 * constant time, then a strict parse). Untrusted input: every refusal is a
 * 4xx carrying its ReasonCode.
 */
async function listenForWebhookAnswers(webhook: WebhookChannel, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    void answerWebhook(webhook, req, res).catch(() => reply(res, 500, { error: { code: ReasonCode.INTEGRITY_FAILURE } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

async function answerWebhook(webhook: WebhookChannel, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || req.url !== WEBHOOK_CALLBACK_PATH) return reply(res, 404, { error: { code: ReasonCode.SCHEMA_INVALID, message: 'not found' } });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CALLBACK_BODY) return reply(res, 413, { error: { code: ReasonCode.SCHEMA_INVALID, message: 'body too large' } });
    chunks.push(chunk);
  }
  const header = req.headers[WEBHOOK_SIGNATURE_HEADER];
  try {
    const answer = webhook.handleCallback(Buffer.concat(chunks), typeof header === 'string' ? header : undefined);
    return reply(res, 200, { request: answer.request, answer: answer.answer });
  } catch (error) {
    const code = error instanceof LedgerError ? error.code : ReasonCode.SCHEMA_INVALID;
    const status = code === ReasonCode.INVALID_SIGNATURE ? 401 : code === ReasonCode.REPLAY || code === ReasonCode.STALE_APPROVAL ? 409 : 400;
    return reply(res, status, { error: { code, message: error instanceof Error ? error.message : 'refused' } });
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
