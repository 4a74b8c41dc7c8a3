import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReasonCode } from '@agent-ledger/refusals';
import { TelegramChannel } from '../src/telegram.js';
import { ChannelDown } from '../src/errors.js';
import type { ChannelAnswer, ChannelRefusal } from '../src/types.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { makePending, next } from './support/fixtures.js';

const TOKEN = '123456:test-token';
const CHAT = 424242;
const APPROVER = 1001;
const STRANGER = 6666;

async function setup(): Promise<{ fake: FakeTelegram; channel: TelegramChannel; close: () => Promise<void> }> {
  const fake = new FakeTelegram(TOKEN);
  const apiBase = await fake.start();
  const channel = new TelegramChannel({ apiBase, token: TOKEN, chatId: CHAT, allowedUserIds: [APPROVER], pollTimeoutSeconds: 5, retryDelayMs: 50 });
  channel.start();
  return {
    fake,
    channel,
    close: async () => {
      await channel.close();
      await fake.stop();
    },
  };
}

test('sendMessage carries the exact operation and an inline keyboard; an allowed press is an answer, acknowledged and edited', async () => {
  const { fake, channel, close } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const message = fake.sent[0];
    assert.ok(message);
    const call = fake.calls.find((c) => c.method === 'sendMessage');
    assert.equal(call?.params.chat_id, CHAT);
    for (const text of ['payments.transfer', 'transfer', 'account:ops-main', 'vendor:acme-gmbh', '"amountCents":125000', pending.proposal, pending.request]) {
      assert.ok(message.text.includes(text), `message shows ${text}`);
    }
    const approve = FakeTelegram.buttonData(message, 0);
    const deny = FakeTelegram.buttonData(message, 1);
    assert.match(approve, /^a:[A-Za-z0-9_-]{16}$/);
    assert.equal(deny, `d:${approve.slice(2)}`);
    assert.ok(Buffer.byteLength(approve) <= 64, 'Telegram limits callback_data to 64 bytes');

    const answerP = next<ChannelAnswer>((l) => channel.onAnswer(l));
    const ack = await fake.press(APPROVER, approve, message);
    assert.deepEqual(await answerP, { channel: 'telegram', request: pending.request, answer: 'approve', platformIdentity: `telegram:${APPROVER}` });
    assert.equal(ack.text, 'Approved');
    const edited = await new Promise<Record<string, unknown>>((resolve) => {
      const found = fake.calls.find((c) => c.method === 'editMessageText');
      if (found) return resolve(found.params);
      fake.events.on('call', (c: { method: string; params: Record<string, unknown> }) => c.method === 'editMessageText' && resolve(c.params));
    });
    assert.equal(edited.message_id, message.message_id);
    assert.equal(edited.chat_id, CHAT);
    assert.equal(edited.reply_markup, undefined, 'the keyboard is removed');
    assert.match(String(edited.text), /Approved by @approver$/);
  } finally {
    await close();
  }
});

test('a deny press is a deny', async () => {
  const { fake, channel, close } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const message = fake.sent[0]!;
    const answerP = next<ChannelAnswer>((l) => channel.onAnswer(l));
    await fake.press(APPROVER, FakeTelegram.buttonData(message, 1), message);
    assert.equal((await answerP).answer, 'deny');
  } finally {
    await close();
  }
});

test('attacker: a user not on the allowed list is told no and recorded as refused; the request stays open', async () => {
  const { fake, channel, close } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const message = fake.sent[0]!;
    const answers: ChannelAnswer[] = [];
    channel.onAnswer((a) => answers.push(a));
    const refusalP = next<ChannelRefusal>((l) => channel.onRefusal(l));
    const ack = await fake.press(STRANGER, FakeTelegram.buttonData(message, 0), message, 'mallory');
    assert.deepEqual(await refusalP, { channel: 'telegram', code: ReasonCode.POLICY_VIOLATION, platformIdentity: `telegram:${STRANGER}`, detail: 'user is not on the allowed list' });
    assert.match(String(ack.text), /not allowed/);
    assert.deepEqual(answers, []);
    // The rightful approver can still answer.
    const answerP = next<ChannelAnswer>((l) => channel.onAnswer(l));
    await fake.press(APPROVER, FakeTelegram.buttonData(message, 1), message);
    assert.equal((await answerP).platformIdentity, `telegram:${APPROVER}`);
  } finally {
    await close();
  }
});

test('attacker: a replayed press counts once; the replay is refused as REPLAY', async () => {
  const { fake, channel, close } = await setup();
  try {
    const { pending } = makePending();
    await channel.notify(pending);
    const message = fake.sent[0]!;
    const answers: ChannelAnswer[] = [];
    channel.onAnswer((a) => answers.push(a));
    await fake.press(APPROVER, FakeTelegram.buttonData(message, 0), message);
    const refusalP = next<ChannelRefusal>((l) => channel.onRefusal(l));
    // Same data again, and the opposite button of the same message: both are replays.
    const ack = await fake.press(APPROVER, FakeTelegram.buttonData(message, 0), message);
    assert.equal((await refusalP).code, ReasonCode.REPLAY);
    assert.match(String(ack.text), /no longer pending/);
    const refusal2 = next<ChannelRefusal>((l) => channel.onRefusal(l));
    await fake.press(APPROVER, FakeTelegram.buttonData(message, 1), message);
    assert.equal((await refusal2).code, ReasonCode.REPLAY);
    assert.equal(answers.length, 1);
    assert.equal(answers[0]?.answer, 'approve');
  } finally {
    await close();
  }
});

test('attacker: malformed, unknown and foreign callback data is refused and never answers', async () => {
  const { fake, channel, close } = await setup();
  try {
    const first = makePending();
    const second = makePending();
    await channel.notify(first.pending);
    await channel.notify(second.pending);
    const [m1, m2] = [fake.sent[0]!, fake.sent[1]!];
    const answers: ChannelAnswer[] = [];
    channel.onAnswer((a) => answers.push(a));
    const refusals: ChannelRefusal[] = [];
    channel.onRefusal((r) => refusals.push(r));
    const shortId = FakeTelegram.buttonData(m1, 0).slice(2);
    const malformed = ['', 'a', `x:${shortId}`, `a:${shortId}x`, `a:${shortId.slice(1)}`, `a:${shortId}\n`, 'a:../../../etc/passw', `approve:${shortId}`, '{"answer":"approve"}'];
    for (const data of malformed) await fake.press(APPROVER, data, m1);
    assert.deepEqual(refusals.map((r) => r.code), malformed.map(() => ReasonCode.SCHEMA_INVALID));
    // Well-formed but never issued.
    await fake.press(APPROVER, 'a:AAAAAAAAAAAAAAAA', m1);
    assert.equal(refusals.at(-1)?.code, ReasonCode.STALE_APPROVAL);
    // Data of message 1 pressed on message 2 (a crafted callback): refused, and message 1 stays open.
    await fake.press(APPROVER, `a:${shortId}`, m2);
    assert.equal(refusals.at(-1)?.code, ReasonCode.INTEGRITY_FAILURE);
    // A callback query without data or without a message at all.
    await fake.press(APPROVER, `a:${shortId}`, undefined);
    assert.equal(refusals.at(-1)?.code, ReasonCode.INTEGRITY_FAILURE);
    assert.deepEqual(answers, []);
    const answerP = next<ChannelAnswer>((l) => channel.onAnswer(l));
    await fake.press(APPROVER, FakeTelegram.buttonData(m1, 1), m1);
    assert.deepEqual(await answerP, { channel: 'telegram', request: first.pending.request, answer: 'deny', platformIdentity: `telegram:${APPROVER}` });
  } finally {
    await close();
  }
});

test('a press after the deadline is refused as STALE_APPROVAL', async () => {
  const fake = new FakeTelegram(TOKEN);
  const apiBase = await fake.start();
  let now = Date.now();
  const channel = new TelegramChannel({ apiBase, token: TOKEN, chatId: CHAT, allowedUserIds: [APPROVER], pollTimeoutSeconds: 5, now: () => now });
  channel.start();
  try {
    const { pending } = makePending({ deadlineMs: 30_000 });
    await channel.notify(pending);
    const message = fake.sent[0]!;
    now += 31_000;
    const refusalP = next<ChannelRefusal>((l) => channel.onRefusal(l));
    await fake.press(APPROVER, FakeTelegram.buttonData(message, 0), message);
    assert.equal((await refusalP).code, ReasonCode.STALE_APPROVAL);
  } finally {
    await channel.close();
    await fake.stop();
  }
});

test('a Bot API outage or a wrong token makes notify throw ChannelDown', async () => {
  const fake = new FakeTelegram(TOKEN);
  const apiBase = await fake.start();
  try {
    const { pending } = makePending();
    fake.down = true;
    const up = new TelegramChannel({ apiBase, token: TOKEN, chatId: CHAT, allowedUserIds: [APPROVER] });
    await assert.rejects(up.notify(pending), (e: unknown) => e instanceof ChannelDown && e.code === ReasonCode.NO_CHANNEL && e.retryable);
    fake.down = false;
    const wrongToken = new TelegramChannel({ apiBase, token: '999:wrong', chatId: CHAT, allowedUserIds: [APPROVER] });
    await assert.rejects(wrongToken.notify(pending), (e: unknown) => e instanceof ChannelDown);
    const unreachable = new TelegramChannel({ apiBase: 'http://127.0.0.1:1', token: TOKEN, chatId: CHAT, allowedUserIds: [APPROVER] });
    await assert.rejects(unreachable.notify(pending), (e: unknown) => e instanceof ChannelDown);
  } finally {
    await fake.stop();
  }
});
