import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReasonCode } from '@agent-ledger/refusals';
import { DiscordChannel } from '../src/discord.js';
import { ChannelDown } from '../src/errors.js';
import type { ChannelAnswer, ChannelRefusal } from '../src/types.js';
import { DiscordInteractionClient, FakeDiscordRest, type DiscordMessage } from './support/fake-discord.js';
import { makePending } from './support/fixtures.js';

const TOKEN = 'bot-token-abc';
const CHANNEL = '555';
const APPROVER = '80351110224678912';
const STRANGER = '12345678901234567';

interface Rig {
  rest: FakeDiscordRest;
  channel: DiscordChannel;
  discord: DiscordInteractionClient;
  answers: ChannelAnswer[];
  refusals: ChannelRefusal[];
  close: () => Promise<void>;
}

async function setup(now?: () => number): Promise<Rig> {
  const rest = new FakeDiscordRest(TOKEN);
  const apiBase = await rest.start();
  const discord = new DiscordInteractionClient();
  const channel = new DiscordChannel({ apiBase, token: TOKEN, channelId: CHANNEL, applicationPublicKey: discord.publicKeyHex, allowedUserIds: [APPROVER], ...(now ? { now } : {}) });
  discord.url = `http://127.0.0.1:${await channel.listen()}/interactions`;
  const answers: ChannelAnswer[] = [];
  const refusals: ChannelRefusal[] = [];
  channel.onAnswer((a) => answers.push(a));
  channel.onRefusal((r) => refusals.push(r));
  return {
    rest,
    channel,
    discord,
    answers,
    refusals,
    close: async () => {
      await channel.close();
      await rest.stop();
    },
  };
}

function customId(message: DiscordMessage, button: 0 | 1): string {
  return message.components[0]?.components[button]?.custom_id as string;
}

test('the message carries the exact operation and buttons; PING gets PONG; an allowed press answers with UPDATE_MESSAGE', async () => {
  const rig = await setup();
  try {
    const { pending } = makePending();
    await rig.channel.notify(pending);
    const message = rig.rest.messages[0]!;
    assert.equal(message.channel_id, CHANNEL);
    assert.deepEqual(message.allowed_mentions, { parse: [] });
    for (const text of ['payments.transfer', 'vendor', 'acme', pending.request]) assert.ok(message.content.includes(text), `message shows ${text}`);
    assert.ok(message.content.includes('\\*2024\\-117\\*'), 'markdown in agent text is escaped');
    assert.match(customId(message, 0), /^ledger:a:[A-Za-z0-9_-]{16}$/);

    const ping = await rig.discord.send({ body: { type: 1, id: '1', application_id: '1', token: 't', version: 1 } });
    assert.equal(ping.status, 200);
    assert.deepEqual(ping.body, { type: 1 });

    const press = await rig.discord.send({ body: rig.discord.buttonPress(APPROVER, customId(message, 0), message.id) });
    assert.equal(press.status, 200);
    assert.equal(press.body.type, 7);
    const data = press.body.data as { content: string; components: unknown[] };
    assert.deepEqual(data.components, []);
    assert.match(data.content, /Approved by <@80351110224678912>$/);
    assert.deepEqual(rig.answers, [{ channel: 'discord', request: pending.request, answer: 'approve', platformIdentity: `discord:${APPROVER}` }]);
  } finally {
    await rig.close();
  }
});

test('a press in a DM (user instead of member) counts too, and Deny denies', async () => {
  const rig = await setup();
  try {
    const { pending } = makePending();
    await rig.channel.notify(pending);
    const message = rig.rest.messages[0]!;
    const body = rig.discord.buttonPress(APPROVER, customId(message, 1), message.id);
    delete body.member;
    delete body.guild_id;
    body.user = { id: APPROVER, username: 'approver' };
    const press = await rig.discord.send({ body });
    assert.equal(press.body.type, 7);
    assert.equal(rig.answers[0]?.answer, 'deny');
  } finally {
    await rig.close();
  }
});

test('attacker: forged, missing, malformed signatures, an altered body and a stale timestamp get 401 and change nothing', async () => {
  const rig = await setup();
  try {
    const { pending } = makePending();
    await rig.channel.notify(pending);
    const message = rig.rest.messages[0]!;
    const press = (): Record<string, unknown> => rig.discord.buttonPress(APPROVER, customId(message, 0), message.id);
    const now = Math.floor(Date.now() / 1000);
    const attacks: [string, Parameters<DiscordInteractionClient['send']>[0], ReasonCode][] = [
      ['signed by another key', { body: press(), seed: new DiscordInteractionClient().seed }, ReasonCode.INVALID_SIGNATURE],
      ['no signature', { body: press(), signature: null }, ReasonCode.INVALID_SIGNATURE],
      ['no timestamp', { body: press(), omitTimestamp: true }, ReasonCode.INVALID_SIGNATURE],
      ['signature not hex', { body: press(), signature: 'zz'.repeat(64) }, ReasonCode.INVALID_SIGNATURE],
      ['signature too short', { body: press(), signature: 'ab'.repeat(63) }, ReasonCode.INVALID_SIGNATURE],
      ['zero signature', { body: press(), signature: '00'.repeat(64) }, ReasonCode.INVALID_SIGNATURE],
      ['body altered after signing', { body: rig.discord.buttonPress(APPROVER, customId(message, 0), message.id, '42'), signedBody: JSON.stringify(rig.discord.buttonPress(STRANGER, customId(message, 1), message.id, '42')) }, ReasonCode.INVALID_SIGNATURE],
      ['stale timestamp (6 min old), validly signed', { body: press(), timestamp: now - 360 }, ReasonCode.STALE_APPROVAL],
      ['timestamp from the future, validly signed', { body: press(), timestamp: now + 360 }, ReasonCode.STALE_APPROVAL],
    ];
    for (const [name, attack, code] of attacks) {
      const response = await rig.discord.send(attack);
      assert.equal(response.status, 401, name);
      assert.equal(rig.refusals.at(-1)?.code, code, name);
    }
    // A signature over the same bytes with a different timestamp header: the timestamp is part of what is signed.
    const body = press();
    const response = await fetch(rig.discord.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature-timestamp': String(now + 1), 'x-signature-ed25519': 'ab'.repeat(64) },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 401);
    assert.deepEqual(rig.answers, []);
    // After all that, the real press still works.
    const real = await rig.discord.send({ body: press() });
    assert.equal(real.body.type, 7);
    assert.equal(rig.answers.length, 1);
  } finally {
    await rig.close();
  }
});

test('attacker: a non-allowed user, a replayed interaction, a second press, malformed and foreign custom ids never answer', async () => {
  const rig = await setup();
  try {
    const a = makePending();
    const b = makePending();
    await rig.channel.notify(a.pending);
    await rig.channel.notify(b.pending);
    const [m1, m2] = [rig.rest.messages[0]!, rig.rest.messages[1]!];

    const stranger = await rig.discord.send({ body: rig.discord.buttonPress(STRANGER, customId(m1, 0), m1.id) });
    assert.equal(stranger.status, 200);
    assert.equal(stranger.body.type, 4);
    assert.equal((stranger.body.data as { flags: number }).flags, 64);
    assert.deepEqual(rig.refusals.at(-1), { channel: 'discord', code: ReasonCode.POLICY_VIOLATION, platformIdentity: `discord:${STRANGER}`, detail: 'user is not on the allowed list' });

    for (const bad of ['', 'ledger:a:', `ledger:x:${customId(m1, 0).slice(9)}`, `${customId(m1, 0)}0`, 'ledger:a:AAAAAAAAAAAAAAA!', 'a:' + customId(m1, 0).slice(9)]) {
      const r = await rig.discord.send({ body: rig.discord.buttonPress(APPROVER, bad, m1.id) });
      assert.equal(r.body.type, 4, bad);
      assert.equal(rig.refusals.at(-1)?.code, ReasonCode.SCHEMA_INVALID, bad);
    }
    const noData = rig.discord.buttonPress(APPROVER, 'x', m1.id);
    delete noData.data;
    await rig.discord.send({ body: noData });
    assert.equal(rig.refusals.at(-1)?.code, ReasonCode.SCHEMA_INVALID);

    // m1's button pressed on m2 (crafted interaction): refused.
    await rig.discord.send({ body: rig.discord.buttonPress(APPROVER, customId(m1, 0), m2.id) });
    assert.equal(rig.refusals.at(-1)?.code, ReasonCode.INTEGRITY_FAILURE);
    assert.equal(rig.answers.length, 0);

    const press = rig.discord.buttonPress(APPROVER, customId(m1, 0), m1.id);
    assert.equal((await rig.discord.send({ body: press })).body.type, 7);
    // The exact signed request replayed inside the 5-minute window.
    const replay = await rig.discord.send({ body: press });
    assert.equal(replay.body.type, 4);
    assert.equal(rig.refusals.at(-1)?.code, ReasonCode.REPLAY);
    // A fresh interaction pressing the other button of an answered message.
    await rig.discord.send({ body: rig.discord.buttonPress(APPROVER, customId(m1, 1), m1.id) });
    assert.equal(rig.refusals.at(-1)?.code, ReasonCode.REPLAY);
    assert.equal(rig.answers.length, 1);
    assert.equal(rig.answers[0]?.request, a.pending.request);
  } finally {
    await rig.close();
  }
});

test('signed garbage gets 400; unknown interaction types 400; wrong path 404; oversized bodies 413', async () => {
  const rig = await setup();
  try {
    assert.equal((await rig.discord.send({ body: [1, 2] })).status, 400);
    assert.equal((await rig.discord.send({ body: { type: 2, id: '1' } })).status, 400);
    const dup = '{"type":1,"type":3}';
    const ts = String(Math.floor(Date.now() / 1000));
    const { nodeEd25519, toHex, utf8, concatBytes } = await import('@agent-ledger/core');
    const sig = toHex(nodeEd25519.sign(rig.discord.seed, concatBytes(utf8(ts), utf8(dup))));
    const dupResponse = await fetch(rig.discord.url, { method: 'POST', headers: { 'x-signature-ed25519': sig, 'x-signature-timestamp': ts }, body: dup });
    assert.equal(dupResponse.status, 400, 'duplicate keys are refused by the strict parser');
    assert.equal((await fetch(rig.discord.url.replace('/interactions', '/other'), { method: 'POST', body: '{}' })).status, 404);
    assert.equal((await fetch(rig.discord.url, { method: 'POST', body: 'x'.repeat(70_000) })).status, 413);
  } finally {
    await rig.close();
  }
});

test('a REST outage, a rejected token or an unreachable API makes notify throw ChannelDown', async () => {
  const rig = await setup();
  const otherRest = new FakeDiscordRest('another-bot-token');
  try {
    const wrongToken = new DiscordChannel({ apiBase: await otherRest.start(), token: TOKEN, channelId: CHANNEL, applicationPublicKey: rig.discord.publicKeyHex, allowedUserIds: [] });
    await assert.rejects(wrongToken.notify(makePending().pending), (e: unknown) => e instanceof ChannelDown);
    const { pending } = makePending();
    rig.rest.down = true;
    await assert.rejects(rig.channel.notify(pending), (e: unknown) => e instanceof ChannelDown && e.code === ReasonCode.NO_CHANNEL);
    rig.rest.down = false;
    const unreachable = new DiscordChannel({ apiBase: 'http://127.0.0.1:1/api/v10', token: TOKEN, channelId: CHANNEL, applicationPublicKey: rig.discord.publicKeyHex, allowedUserIds: [] });
    await assert.rejects(unreachable.notify(pending), (e: unknown) => e instanceof ChannelDown);
    assert.equal(rig.rest.messages.length, 0);
  } finally {
    await otherRest.stop();
    await rig.close();
  }
});
