import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as channels from '../src/index.js';

test('the package exports exactly these names', () => {
  assert.deepEqual(Object.keys(channels).sort(), [
    'ChannelDown',
    'ChannelName',
    'ChatBridge',
    'CliChannel',
    'DEFAULT_FAILOVER_ORDER',
    'DISCORD_MAX_SKEW_SECONDS',
    'DiscordChannel',
    'EscalationRouter',
    'FailoverNotifier',
    'TelegramChannel',
    'WEBHOOK_SIGNATURE_HEADER',
    'WebhookChannel',
    'describeEscalation',
    'describePendingApproval',
    'pendingApprovalFrom',
    'requireSelfSignedAbove',
    'verifyDiscordInteraction',
    'webhookSignature',
  ]);
});
