import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { TelegramChannel } from '../src/telegram.js';
import { DiscordChannel } from '../src/discord.js';
import { CliChannel } from '../src/cli.js';
import { WebhookChannel } from '../src/webhook.js';
import { FailoverNotifier, DEFAULT_FAILOVER_ORDER } from '../src/failover.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { DiscordInteractionClient, FakeDiscordRest, type DiscordMessage } from './support/fake-discord.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { makePending, next } from './support/fixtures.js';

const TOKEN = '123456:test-token';
const SECRET = 'webhook-shared-secret-0123456789abcdef';
const TG_USER = 1001;
const DC_USER = '80351110224678912';

interface Stack {
  telegramApi: FakeTelegram;
  discordRest: FakeDiscordRest;
  discordClient: DiscordInteractionClient;
  receiver: WebhookReceiver;
  telegram: TelegramChannel;
  discord: DiscordChannel;
  cli: CliChannel;
  cliIn: PassThrough;
  cliOut: PassThrough;
  webhook: WebhookChannel;
  close: () => Promise<void>;
}

async function stack(): Promise<Stack> {
  const telegramApi = new FakeTelegram(TOKEN);
  const discordRest = new FakeDiscordRest('discord-token');
  const discordClient = new DiscordInteractionClient();
  const receiver = new WebhookReceiver(SECRET);
  const telegram = new TelegramChannel({ apiBase: await telegramApi.start(), token: TOKEN, chatId: 1, allowedUserIds: [TG_USER], pollTimeoutSeconds: 5, retryDelayMs: 50 });
  telegram.start();
  const discord = new DiscordChannel({ apiBase: await discordRest.start(), token: 'discord-token', channelId: '555', applicationPublicKey: discordClient.publicKeyHex, allowedUserIds: [DC_USER] });
  discordClient.url = `http://127.0.0.1:${await discord.listen()}/interactions`;
  const cliIn = new PassThrough();
  const cliOut = new PassThrough();
  const cli = new CliChannel({ input: cliIn, output: cliOut, operator: 'oncall-bob' });
  const webhook = new WebhookChannel({ url: await receiver.start(), secret: SECRET });
  return {
    telegramApi, discordRest, discordClient, receiver, telegram, discord, cli, cliIn, cliOut, webhook,
    close: async () => {
      cli.close();
      await telegram.close();
      await discord.close();
      await Promise.all([telegramApi.stop(), discordRest.stop(), receiver.stop()]);
    },
  };
}

function customId(message: DiscordMessage, button: 0 | 1): string {
  return message.components[0]?.components[button]?.custom_id as string;
}

test('the default order is Telegram, Discord, CLI, webhook', () => {
  assert.deepEqual(DEFAULT_FAILOVER_ORDER, ['telegram', 'discord', 'cli', 'webhook']);
});

test('Telegram down: the request goes to Discord at once, and a Discord answer is recorded as delivered by Discord', async () => {
  const s = await stack();
  try {
    s.telegramApi.down = true;
    const notifier = new FailoverNotifier({ channels: [s.webhook, s.cli, s.discord, s.telegram], sliceMs: 60_000 });
    const { pending } = makePending();
    const routed = notifier.route(pending);
    const [message] = (await once(s.discordRest.events, 'message')) as [DiscordMessage];
    await s.discordClient.send({ body: s.discordClient.buttonPress(DC_USER, customId(message, 0), message.id) });
    const outcome = await routed;
    assert.equal(outcome.status, 'answered');
    assert.ok(outcome.status === 'answered');
    assert.equal(outcome.deliveredBy, 'discord');
    assert.deepEqual(outcome.answer, { channel: 'discord', request: pending.request, answer: 'approve', platformIdentity: `discord:${DC_USER}` });
    assert.deepEqual(outcome.attempts, [
      { channel: 'telegram', outcome: 'down', code: ReasonCode.NO_CHANNEL },
      { channel: 'discord', outcome: 'notified', code: null },
    ]);
    assert.equal(s.receiver.deliveries.length, 0, 'later channels were never bothered');
  } finally {
    await s.close();
  }
});

test('Telegram unanswered: after its slice Discord is tried, then the CLI; the CLI answer wins', async () => {
  const s = await stack();
  try {
    const notifier = new FailoverNotifier({ channels: [s.telegram, s.discord, s.cli, s.webhook], sliceMs: { telegram: 400, discord: 400, cli: 60_000 } });
    const { pending } = makePending();
    const printed = once(s.cliOut, 'data');
    const routed = notifier.route(pending);
    const [chunk] = (await printed) as [Buffer];
    const prompt = chunk.toString('utf8');
    assert.ok(prompt.includes(pending.request));
    const shortId = /deny ([A-Za-z0-9_-]{16})/.exec(prompt)?.[1];
    assert.ok(shortId);
    s.cliIn.write(`deny ${shortId}\n`);
    const outcome = await routed;
    assert.ok(outcome.status === 'answered');
    assert.equal(outcome.deliveredBy, 'cli');
    assert.equal(outcome.answer.answer, 'deny');
    assert.equal(outcome.answer.platformIdentity, 'cli:oncall-bob');
    assert.deepEqual(outcome.attempts.map((a) => [a.channel, a.outcome]), [['telegram', 'unanswered'], ['discord', 'unanswered'], ['cli', 'notified']]);
    assert.equal(s.telegramApi.sent.length, 1);
    assert.equal(s.discordRest.messages.length, 1);
  } finally {
    await s.close();
  }
});

test('a late answer on a channel already passed over still counts, and names that channel', async () => {
  const s = await stack();
  try {
    const notifier = new FailoverNotifier({ channels: [s.telegram, s.discord], order: ['telegram', 'discord'], sliceMs: 50 });
    const { pending } = makePending();
    const routed = notifier.route(pending);
    const [message] = (await once(s.discordRest.events, 'message')) as [DiscordMessage];
    assert.ok(message);
    const tg = s.telegramApi.sent[0]!;
    await s.telegramApi.press(TG_USER, FakeTelegram.buttonData(tg, 0), tg);
    const outcome = await routed;
    assert.ok(outcome.status === 'answered');
    assert.equal(outcome.deliveredBy, 'telegram');
    assert.equal(outcome.answer.platformIdentity, `telegram:${TG_USER}`);
  } finally {
    await s.close();
  }
});

test('a configured order is followed (webhook first), channels missing from the stack are recorded as absent', async () => {
  const s = await stack();
  try {
    const notifier = new FailoverNotifier({ channels: [s.webhook, s.telegram], order: ['webhook', 'web', 'telegram'], sliceMs: 60_000 });
    const { pending } = makePending();
    const answerSeen = next((l) => s.webhook.onAnswer(l));
    const delivered = once(s.receiver.events, 'delivery');
    const routed = notifier.route(pending);
    await delivered;
    const { body, signature } = s.receiver.answer('approve', 'pager-carol');
    s.webhook.handleCallback(body, signature);
    await answerSeen;
    const outcome = await routed;
    assert.ok(outcome.status === 'answered');
    assert.equal(outcome.deliveredBy, 'webhook');
    assert.deepEqual(outcome.attempts, [
      { channel: 'web', outcome: 'absent', code: ReasonCode.NO_CHANNEL },
      { channel: 'webhook', outcome: 'notified', code: null },
    ]);
    assert.equal(s.telegramApi.sent.length, 0);
  } finally {
    await s.close();
  }
});

test('every channel down: NO_CHANNEL, without waiting for the deadline and without an answer', async () => {
  const s = await stack();
  try {
    s.telegramApi.down = true;
    s.discordRest.down = true;
    s.receiver.status = 503;
    s.cliOut.destroy();
    const notifier = new FailoverNotifier({ channels: [s.telegram, s.discord, s.cli, s.webhook] });
    const outcome = await notifier.route(makePending({ deadlineMs: 3_600_000 }).pending);
    assert.equal(outcome.status, 'unanswered');
    assert.ok(outcome.status === 'unanswered');
    assert.equal(outcome.code, ReasonCode.NO_CHANNEL);
    assert.deepEqual(outcome.attempts.map((a) => [a.channel, a.outcome]), [['telegram', 'down'], ['discord', 'down'], ['cli', 'down'], ['webhook', 'down']]);
  } finally {
    await s.close();
  }
});

test('delivered but never answered: TIMEOUT at the deadline; the notifier never answers itself', async () => {
  const s = await stack();
  try {
    const notifier = new FailoverNotifier({ channels: [s.telegram, s.discord], order: ['telegram', 'discord'] });
    const outcome = await notifier.route(makePending({ deadlineMs: 300 }).pending);
    assert.ok(outcome.status === 'unanswered');
    assert.equal(outcome.code, ReasonCode.TIMEOUT);
    assert.deepEqual(outcome.attempts.map((a) => a.outcome), ['unanswered', 'unanswered']);
    assert.equal(s.telegramApi.sent.length, 1);
    assert.equal(s.discordRest.messages.length, 1);
  } finally {
    await s.close();
  }
});

test('misconfiguration is refused with typed errors', () => {
  const telegram = new TelegramChannel({ token: 't', chatId: 1, allowedUserIds: [] });
  assert.throws(() => new FailoverNotifier({ channels: [telegram, telegram] }), (e: unknown) => e instanceof LedgerError && e.code === ReasonCode.SCHEMA_INVALID);
  assert.throws(() => new FailoverNotifier({ channels: [telegram], order: ['telegram', 'telegram'] }), (e: unknown) => e instanceof LedgerError && e.code === ReasonCode.SCHEMA_INVALID);
});
