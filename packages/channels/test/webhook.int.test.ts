import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { WebhookChannel } from '../src/webhook.js';
import { ChannelDown } from '../src/errors.js';
import type { ChannelAnswer, ChannelRefusal } from '../src/types.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { makePending } from './support/fixtures.js';

const SECRET = 'webhook-shared-secret-0123456789abcdef';

function code(expected: ReasonCode): (e: unknown) => boolean {
  return (e) => e instanceof LedgerError && e.code === expected;
}

async function setup(): Promise<{ receiver: WebhookReceiver; channel: WebhookChannel; answers: ChannelAnswer[]; refusals: ChannelRefusal[] }> {
  const receiver = new WebhookReceiver(SECRET);
  const channel = new WebhookChannel({ url: await receiver.start(), secret: SECRET });
  const answers: ChannelAnswer[] = [];
  const refusals: ChannelRefusal[] = [];
  channel.onAnswer((a) => answers.push(a));
  channel.onRefusal((r) => refusals.push(r));
  return { receiver, channel, answers, refusals };
}

test('the pending approval is POSTed with a valid HMAC; a signed callback is an answer, once', async () => {
  const { receiver, channel, answers } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const delivery = receiver.deliveries[0]!;
    assert.equal(delivery.hmacValid, true);
    const payload = JSON.parse(delivery.body) as { kind: string; callbackId: string; pending: unknown; text: string };
    assert.equal(payload.kind, 'agent-ledger.approval.pending');
    assert.deepEqual(payload.pending, pending);
    assert.ok(payload.text.includes('vendor:acme-gmbh'));

    const { body, signature } = receiver.answer('approve', 'alice');
    const answer = channel.handleCallback(body, signature);
    assert.deepEqual(answer, { channel: 'webhook', request: pending.request, answer: 'approve', platformIdentity: 'webhook:alice' });
    assert.deepEqual(answers, [answer]);
    // Replayed callback: same bytes, same valid HMAC.
    assert.throws(() => channel.handleCallback(body, signature), code(ReasonCode.REPLAY));
    assert.equal(answers.length, 1);
  } finally {
    await receiver.stop();
  }
});

test('attacker: a missing, wrong or malformed HMAC, or a body changed after signing, is INVALID_SIGNATURE', async () => {
  const { receiver, channel, answers, refusals } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const { body, signature } = receiver.answer('approve');
    const otherKey = `sha256=${createHmac('sha256', 'another-secret-of-sufficient-length!!').update(body).digest('hex')}`;
    const altered = body.replace('"approve"', '"deny"');
    for (const [name, b, sig] of [
      ['missing', body, undefined],
      ['empty', body, ''],
      ['other key', body, otherKey],
      ['bare hex, no prefix', body, signature.slice(7)],
      ['uppercase hex', body, `sha256=${signature.slice(7).toUpperCase()}`],
      ['short', body, signature.slice(0, -2)],
      ['sha1 label', body, signature.replace('sha256=', 'sha1=')],
      ['body altered after signing', altered, signature],
    ] as const) {
      assert.throws(() => channel.handleCallback(b, sig), code(ReasonCode.INVALID_SIGNATURE), name);
    }
    assert.equal(answers.length, 0);
    assert.ok(refusals.every((r) => r.code === ReasonCode.INVALID_SIGNATURE));
    // The genuine answer still works afterwards.
    assert.equal(channel.handleCallback(body, signature).answer, 'approve');
  } finally {
    await receiver.stop();
  }
});

test('attacker: validly signed but malformed callbacks are SCHEMA_INVALID; unknown ids STALE_APPROVAL; a foreign request INTEGRITY_FAILURE', async () => {
  const { receiver, channel, answers } = await setup();
  try {
    const first = makePending();
    const second = makePending();
    await channel.notify(first.pending);
    await channel.notify(second.pending);
    const good = JSON.parse(receiver.answer('approve', 'alice', receiver.deliveries[0]).body) as Record<string, unknown>;
    const sign = (text: string): string => `sha256=${createHmac('sha256', SECRET).update(text).digest('hex')}`;
    const malformed = [
      'not json',
      '[]',
      '{}',
      JSON.stringify({ ...good, answer: 'yes' }),
      JSON.stringify({ ...good, approver: 'bob smith' }),
      JSON.stringify({ ...good, approver: '' }),
      JSON.stringify({ ...good, callbackId: 'short' }),
      JSON.stringify({ ...good, request: 'ABC' }),
      JSON.stringify({ ...good, extra: 1 }),
      `{"callbackId":"${String(good.callbackId)}","callbackId":"${String(good.callbackId)}","request":"${String(good.request)}","answer":"approve","approver":"a"}`,
      '\ufeff' + JSON.stringify(good),
      '{"a":' + '['.repeat(100) + ']'.repeat(100) + '}',
    ];
    for (const text of malformed) assert.throws(() => channel.handleCallback(text, sign(text)), code(ReasonCode.SCHEMA_INVALID), text.slice(0, 40));
    const unknown = JSON.stringify({ ...good, callbackId: 'AAAAAAAAAAAAAAAA' });
    assert.throws(() => channel.handleCallback(unknown, sign(unknown)), code(ReasonCode.STALE_APPROVAL));
    const crossed = JSON.stringify({ ...good, request: second.pending.request });
    assert.throws(() => channel.handleCallback(crossed, sign(crossed)), code(ReasonCode.INTEGRITY_FAILURE));
    assert.equal(answers.length, 0);
    const text = JSON.stringify(good);
    assert.equal(channel.handleCallback(new TextEncoder().encode(text), sign(text)).request, first.pending.request);
  } finally {
    await receiver.stop();
  }
});

test('a receiver that answers non-2xx, or is unreachable, makes notify throw ChannelDown', async () => {
  const { receiver, channel } = await setup();
  try {
    receiver.status = 500;
    await assert.rejects(channel.notify(makePending().pending), (e: unknown) => e instanceof ChannelDown);
    const unreachable = new WebhookChannel({ url: 'http://127.0.0.1:1/hook', secret: SECRET });
    await assert.rejects(unreachable.notify(makePending().pending), (e: unknown) => e instanceof ChannelDown);
    assert.throws(() => new WebhookChannel({ url: 'http://127.0.0.1:1/hook', secret: 'short' }), code(ReasonCode.SCHEMA_INVALID));
  } finally {
    await receiver.stop();
  }
});
