import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { TelegramChannel } from '../src/telegram.js';
import { DiscordChannel } from '../src/discord.js';
import { CliChannel } from '../src/cli.js';
import { WebhookChannel } from '../src/webhook.js';
import { EscalationRouter } from '../src/escalation.js';
import type { EscalationNotice } from '../src/types.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { DiscordInteractionClient, FakeDiscordRest } from './support/fake-discord.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// Escalations reach people over the real wire shapes of local fake Telegram,
// Discord and webhook servers: notify goes to the agent owner's channels
// with failover, admin to the admins', emergency to every channel at once
// and then the webhook; every attempt is reported, delivered or failed.

const TOKEN = '123456:test-token';
const SECRET = 'webhook-shared-secret-0123456789abcdef';

function notice(level: EscalationNotice['level'], agentId = 'agent:billing-bot'): EscalationNotice {
  return {
    agentId,
    proposal: 'a'.repeat(64),
    escalation: 'b'.repeat(64),
    level,
    reason: 'no answer before the deadline',
    operation: { tool: 'http', actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme', scope: 'invoices', args: { amount: 250000 } },
  };
}

async function stack() {
  const telegramApi = new FakeTelegram(TOKEN);
  const discordRest = new FakeDiscordRest('discord-token');
  const receiver = new WebhookReceiver(SECRET);
  const telegram = new TelegramChannel({ apiBase: await telegramApi.start(), token: TOKEN, chatId: 1, allowedUserIds: [1001], requestTimeoutMs: 2_000 });
  const discord = new DiscordChannel({ apiBase: await discordRest.start(), token: 'discord-token', channelId: '555', applicationPublicKey: new DiscordInteractionClient().publicKeyHex, allowedUserIds: ['1'], requestTimeoutMs: 2_000 });
  const cliOut = new PassThrough();
  const cli = new CliChannel({ input: new PassThrough(), output: cliOut, operator: 'oncall' });
  const webhook = new WebhookChannel({ url: await receiver.start(), secret: SECRET, requestTimeoutMs: 2_000 });
  return {
    telegramApi, discordRest, receiver, telegram, discord, cli, cliOut, webhook,
    close: async () => {
      cli.close();
      await Promise.all([telegramApi.stop(), discordRest.stop(), receiver.stop()]);
    },
  };
}

test('notify: the owner\'s channels in order, failing over when one is down', async () => {
  const s = await stack();
  try {
    const router = new EscalationRouter([s.telegram, s.discord, s.webhook], { owners: { 'agent:billing-bot': ['telegram', 'discord'], '*': ['webhook'] } });
    const first = await router.route(notice('notify'));
    assert.deepEqual(first.map((d) => [d.channel, d.ok]), [['telegram', true]]);
    const sent = s.telegramApi.sent.at(-1);
    assert.ok(sent?.text.includes('agent: agent:billing-bot') && sent.text.includes('action: payment.send') && sent.text.includes(`escalation: ${'b'.repeat(64)}`), sent?.text);
    assert.equal(sent?.reply_markup, undefined, 'an alert has no buttons');

    s.telegramApi.down = true;
    const failover = await router.route(notice('notify'));
    assert.deepEqual(failover.map((d) => [d.channel, d.ok]), [['telegram', false], ['discord', true]]);
    assert.match(failover[0]?.detail ?? '', /^NO_CHANNEL: /);
    assert.deepEqual(s.discordRest.messages.at(-1)?.allowed_mentions, { parse: [] });

    // Another agent's owner is reached through `*`.
    const other = await router.route(notice('notify', 'agent:ops-bot'));
    assert.deepEqual(other.map((d) => [d.channel, d.ok]), [['webhook', true]]);
    const delivery = s.receiver.deliveries.at(-1);
    assert.equal(delivery?.hmacValid, true);
    assert.equal((JSON.parse(delivery?.body ?? '{}') as { kind: string }).kind, 'agent-ledger.escalation');
  } finally {
    await s.close();
  }
});

test('admin: the admins\' channels; every one down is every failure reported', async () => {
  const s = await stack();
  try {
    const router = new EscalationRouter([s.telegram, s.discord, s.webhook], { admins: ['discord', 'telegram'] });
    assert.deepEqual((await router.route(notice('admin'))).map((d) => [d.channel, d.ok]), [['discord', true]]);
    assert.ok(s.discordRest.messages.at(-1)?.content.includes('ESCALATION'));
    s.discordRest.down = true;
    s.telegramApi.down = true;
    const failed = await router.route(notice('admin'));
    assert.deepEqual(failed.map((d) => [d.channel, d.ok]), [['discord', false], ['telegram', false]]);
  } finally {
    await s.close();
  }
});

test('emergency: every channel at once, then the webhook, even when some are down', async () => {
  const s = await stack();
  try {
    s.telegramApi.down = true;
    const router = new EscalationRouter([s.webhook, s.telegram, s.discord, s.cli]);
    const printed: string[] = [];
    s.cliOut.on('data', (chunk: Buffer) => printed.push(chunk.toString('utf8')));
    const deliveries = await router.route(notice('emergency'));
    assert.deepEqual(deliveries.map((d) => [d.channel, d.ok]), [['telegram', false], ['discord', true], ['cli', true], ['webhook', true]]);
    assert.ok(printed.join('').startsWith('EMERGENCY'));
    assert.equal(s.receiver.deliveries.length, 1);
  } finally {
    await s.close();
  }
});

test('no channel for the level: one failed delivery on none, with NO_CHANNEL', async () => {
  const router = new EscalationRouter([]);
  for (const level of ['notify', 'admin', 'emergency'] as const) {
    const [only, ...rest] = await router.route(notice(level));
    assert.deepEqual([only?.channel, only?.ok, rest.length], ['none', false, 0]);
    assert.match(only?.detail ?? '', /^NO_CHANNEL: /);
  }
});
