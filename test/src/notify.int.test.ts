import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createKafkaBus } from '@agent-ledger/kafka';
import type { Entry } from '@agent-ledger/core';
import { LedgerHome, ROLES, serve, topicNames, type RunningLedger } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, readAs } from './live.js';

// The notify role on the real broker and Postgres: confirmation requests go
// to a local Telegram Bot API and a webhook receiver; answers given there come
// back as human.response statements signed by the chat bridge, and count only
// up to tier 2.

process.env.LEDGER_DEADLINES_MS = '2:20000,3:6000,4:3000';

const TOKEN = '424242:notify-test-token';
const SECRET = 'notify-webhook-shared-secret-0123456789';
const TG_USER = 7001;
const STRANGER = 9009;

/** A sent Bot API message as the fake keeps it. */
interface SentMessage {
  readonly message_id: number;
  readonly chat: { id: number; type: 'private' };
  readonly text: string;
  readonly reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] };
}

/**
 * A local Telegram Bot API: `POST /bot<token>/<method>`, replies
 * `{"ok":true,"result"}`; getUpdates long-polls and drops updates below
 * `offset`, as Telegram does. `down` makes every method answer HTTP 500.
 */
class FakeTelegram {
  readonly sent: SentMessage[] = [];
  readonly events = new EventEmitter();
  down = false;
  readonly #server: Server = createServer((req, res) => {
    this.#serve(req, res).catch(() => res.destroy());
  });
  #updates: { update_id: number; callback_query: unknown }[] = [];
  #nextUpdate = 1;
  #nextMessage = 1;
  #nextQuery = 1;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Queues a button press; resolves with the answerCallbackQuery the bot sends for it. */
  press(userId: number, message: SentMessage, button: 0 | 1): Promise<Record<string, unknown>> {
    const queryId = String(this.#nextQuery++);
    const acknowledged = new Promise<Record<string, unknown>>((resolve) => {
      const onCall = (method: string, params: Record<string, unknown>): void => {
        if (method === 'answerCallbackQuery' && params.callback_query_id === queryId) {
          this.events.off('call', onCall);
          resolve(params);
        }
      };
      this.events.on('call', onCall);
    });
    const data = message.reply_markup.inline_keyboard[0]?.[button]?.callback_data;
    this.#updates.push({ update_id: this.#nextUpdate++, callback_query: { id: queryId, from: { id: userId, is_bot: false, first_name: 'A' }, chat_instance: '-1', message, data } });
    this.events.emit('update');
    return acknowledged;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    if (match === null || match[1] !== TOKEN) return send(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    if (this.down) return send(res, 500, { ok: false, error_code: 500, description: 'Internal Server Error' });
    const method = match[2] as string;
    const params = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    this.events.emit('call', method, params);
    switch (method) {
      case 'sendMessage': {
        const message = { message_id: this.#nextMessage++, chat: { id: Number(params.chat_id), type: 'private' as const }, text: String(params.text), reply_markup: params.reply_markup as SentMessage['reply_markup'] };
        this.sent.push(message);
        return send(res, 200, { ok: true, result: message });
      }
      case 'getUpdates': {
        const offset = typeof params.offset === 'number' ? params.offset : 0;
        this.#updates = this.#updates.filter((u) => u.update_id >= offset);
        if (this.#updates.length === 0) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              this.events.off('update', done);
              resolve();
            };
            const timer = setTimeout(done, (typeof params.timeout === 'number' ? params.timeout : 0) * 1000);
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

/** A webhook receiver: records each POST and checks its HMAC on its side, as an integration would. */
class WebhookReceiver {
  readonly deliveries: { body: string; hmacValid: boolean }[] = [];
  readonly #server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      this.deliveries.push({ body, hmacValid: req.headers['x-ledger-signature'] === sign(body) });
      res.writeHead(204);
      res.end();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks/approvals`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A fresh value so two runs never submit the same proposal. */
function statementNonce(): string {
  return randomBytes(4).toString('hex');
}

function sign(body: string, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A delivery's pending approval as the webhook receiver got it. */
interface Delivered {
  callbackId: string;
  pending: { proposal: string; request: string; tier: number; operation: { tool: string; actionType: string; recipient: string } };
}

describe('notify role: chat approvals', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  const telegram = new FakeTelegram();
  const receiver = new WebhookReceiver();

  before(async () => {
    const apiBase = await telegram.start();
    const url = await receiver.start();
    const dir = freshHome().dir;
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    config.channels = {
      order: ['telegram', 'webhook'],
      telegram: { apiBase, token: TOKEN, chatId: 4242, allowedUserIds: [TG_USER] },
      webhook: { url, secret: SECRET, listenPort: 0 },
    };
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    home = LedgerHome.open(dir);
    running = await serve(home, [...ROLES]);
    readAs(running, home.key('admin-alice'));
  });
  after(async () => {
    await running?.stop();
    await telegram.stop();
    await receiver.stop();
  });

  /** Every entry of the events stream now. */
  async function eventEntries(): Promise<Entry[]> {
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'notify-check' });
    const topics = topicNames(home.config.topicPrefix);
    const entries: Entry[] = [];
    try {
      for (let kp = 0; kp < home.config.eventPartitions; kp++) {
        for await (const record of bus.readRange(topics.events, kp, '0')) entries.push(JSON.parse(record.value.toString('utf8')) as Entry);
      }
    } finally {
      await bus.close();
    }
    return entries;
  }
  async function responsesTo(proposalHash: string): Promise<Entry[]> {
    return (await eventEntries()).filter((e) => e.envelope.statement.type === 'human.response' && (e.envelope.statement.body as { proposal: string }).proposal === proposalHash);
  }
  const emailCustomer = (): ReturnType<typeof proposal> =>
    proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' });
  const messageFor = (proposalHash: string): Promise<SentMessage> =>
    eventually(async () => telegram.sent.find((m) => m.text.startsWith('Approval needed') && m.text.includes(`proposal: ${proposalHash}`)), 20_000, 'the Telegram message');

  test('tier 2: the exact operation goes to Telegram; a stranger\'s press changes nothing; an allowed user\'s press allows it, signed by the chat bridge', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const { statementHash } = await support.propose(emailCustomer());
    const message = await messageFor(statementHash);
    assert.equal(message.chat.id, 4242);
    for (const line of ['Approval needed (tier 2)', 'agent: agent:support-bot', 'tool: email', 'action: email.send', 'target: mail/outbound', 'recipient: customer@example.com', 'scope: ticket:4711']) {
      assert.ok(message.text.includes(line), `message shows "${line}"`);
    }
    assert.ok(message.text.includes('"subject":"Your refund"'), 'message shows the arguments');

    const refusedBefore = running.notifier?.counters.refused ?? 0;
    const strangerAck = await telegram.press(STRANGER, message, 0);
    assert.equal(strangerAck.show_alert, true);
    assert.match(String(strangerAck.text), /not allowed/);
    assert.equal(running.notifier?.counters.refused, refusedBefore + 1);
    const { body } = await getJson<{ pending: { proposalHash: string; status: string }[] }>(running, '/v1/pending');
    assert.equal(body.pending.find((p) => p.proposalHash === statementHash)?.status, 'pending');
    assert.deepEqual(await responsesTo(statementHash), [], 'the refused press wrote nothing');

    const ack = await telegram.press(TG_USER, message, 0);
    assert.equal(ack.text, 'Approved');
    const decision = await support.awaitDecision(statementHash, 20_000);
    assert.deepEqual([decision.outcome, decision.code], ['allow', null]);
    const responses = await responsesTo(statementHash);
    assert.equal(responses.length, 1);
    const response = (responses[0] as Entry).envelope.statement;
    assert.equal(response.author.principal, 'bridge:chat');
    assert.equal(response.author.keyId, home.key('bridge-chat').keyId);
    assert.deepEqual((responses[0] as Entry).envelope.signatures.map((s) => s.keyId), [home.key('bridge-chat').keyId]);
    assert.deepEqual(
      { ...(response.body as Record<string, unknown>) },
      { agentId: 'agent:support-bot', proposal: statementHash, request: (response.body as { request: string }).request, answer: 'approve', assurance: 'platform', platformIdentity: `telegram:${TG_USER}` },
    );
  });

  test('tier 3: an approval pressed on Telegram is on the log but does not count; the request times out and is denied', async () => {
    const deploy = clientFor(home, running, 'agent-deploy-bot');
    const { statementHash } = await deploy.propose(
      proposal({ targetResource: 'repo/payments-service', scope: 'main', args: { command: 'git push --force origin main' }, query: 'publish the hotfix', context: { environment: 'production', crisis: false, run: statementNonce() } }),
    );
    const message = await messageFor(statementHash);
    assert.ok(message.text.startsWith('Approval needed (tier 3)'), message.text.split('\n')[0]);
    assert.equal((await telegram.press(TG_USER, message, 0)).text, 'Approved');
    const [response] = await eventually(async () => {
      const found = await responsesTo(statementHash);
      return found.length > 0 ? found : undefined;
    }, 20_000, 'the bridge response on the log');
    assert.equal(response?.envelope.statement.author.principal, 'bridge:chat');
    assert.equal((response?.envelope.statement.body as { assurance: string }).assurance, 'platform');
    const decision = await deploy.awaitDecision(statementHash, 30_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'TIMEOUT']);
    const entries = await eventEntries();
    const about = entries.filter((e) => (e.envelope.statement.body as { proposal?: string }).proposal === statementHash).map((e) => e.envelope.statement.type);
    assert.ok(about.indexOf('human.response') < about.indexOf('timeout.recorded'), `the answer came before the timeout: ${about.join(', ')}`);
    assert.deepEqual(about.filter((t) => t === 'decision.recorded').length, 2, 'verify_first, then the TIMEOUT deny; no allow');
  });

  test('Telegram down: the request fails over to the webhook; forged and replayed callbacks are refused; the genuine answer counts', async () => {
    telegram.down = true;
    const support = clientFor(home, running, 'agent-support-bot');
    const sentBefore = telegram.sent.length;
    const { statementHash } = await support.propose(emailCustomer());
    const delivery = await eventually(async () => receiver.deliveries.find((d) => (JSON.parse(d.body) as Delivered).pending?.proposal === statementHash), 20_000, 'the webhook delivery');
    assert.equal(delivery.hmacValid, true);
    assert.equal(telegram.sent.length, sentBefore, 'nothing reached Telegram');
    const delivered = JSON.parse(delivery.body) as Delivered;
    assert.deepEqual([delivered.pending.tier, delivered.pending.operation.actionType, delivered.pending.operation.recipient], [2, 'email.send', 'customer@example.com']);

    const callbackUrl = running.webhookCallbackUrl as string;
    const answer = JSON.stringify({ callbackId: delivered.callbackId, request: delivered.pending.request, answer: 'approve', approver: 'alice' });
    const post = async (body: string, signature: string): Promise<{ status: number; code: string | undefined }> => {
      const res = await fetch(callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ledger-signature': signature }, body });
      const json = (await res.json()) as { error?: { code: string } };
      return { status: res.status, code: json.error?.code };
    };
    assert.deepEqual(await post(answer, sign(answer, 'a-different-secret-0123456789abcdef')), { status: 401, code: 'INVALID_SIGNATURE' });
    const denyForged = answer.replace('"approve"', '"deny"');
    assert.deepEqual(await post(denyForged, sign(answer)), { status: 401, code: 'INVALID_SIGNATURE' }, 'body altered after signing');
    assert.deepEqual(await post(answer, sign(answer)), { status: 200, code: undefined });
    assert.deepEqual(await post(answer, sign(answer)), { status: 409, code: 'REPLAY' });

    const decision = await support.awaitDecision(statementHash, 20_000);
    assert.deepEqual([decision.outcome, decision.code], ['allow', null]);
    const responses = await responsesTo(statementHash);
    assert.equal(responses.length, 1);
    const body = (responses[0] as Entry).envelope.statement.body as { answer: string; assurance: string; platformIdentity: string };
    assert.deepEqual([body.answer, body.assurance, body.platformIdentity], ['approve', 'platform', 'webhook:alice']);
    assert.equal((responses[0] as Entry).envelope.statement.author.principal, 'bridge:chat');
  });

  test('escalations reach people: emergency to every channel and the webhook, admin to the admins; each delivery or failure is a signed notification.sent', async () => {
    /** notification.sent entries about a proposal, once `count` are on the log. */
    const notifications = (proposalHash: string, count: number): Promise<Entry[]> =>
      eventually(async () => {
        const found = (await eventEntries()).filter((e) => e.envelope.statement.type === 'notification.sent' && (e.envelope.statement.body as { proposal: string }).proposal === proposalHash);
        return found.length >= count ? found : undefined;
      }, 30_000, `${count} notification.sent entries`);
    const escalationOf = async (proposalHash: string): Promise<Entry> =>
      eventually(async () => (await eventEntries()).find((e) => e.envelope.statement.type === 'escalation.raised' && (e.envelope.statement.body as { proposal: string }).proposal === proposalHash), 30_000, 'the escalation');

    // Tier 4, nobody answers, Telegram is down: the emergency goes everywhere; Telegram's failure is recorded too.
    telegram.down = true;
    const ops = clientFor(home, running, 'agent-ops-bot');
    const critical = await ops.propose(proposal({ args: { command: 'kill -9 -1' }, query: 'stop everything', context: { environment: 'production', crisis: false, run: statementNonce() } }));
    const denied = await ops.awaitDecision(critical.statementHash, 30_000);
    assert.deepEqual([denied.outcome, denied.code], ['deny', 'TIMEOUT']);
    const emergency = await escalationOf(critical.statementHash);
    assert.equal((emergency.envelope.statement.body as { level: string }).level, 'emergency');
    const sent = await notifications(critical.statementHash, 2);
    const bodies = sent.map((e) => e.envelope.statement.body as { escalation: string; level: string; channel: string; ok: boolean; detail: string; agentId: string });
    assert.deepEqual(bodies.map((b) => [b.channel, b.ok]).sort(), [['telegram', false], ['webhook', true]]);
    for (const entry of sent) {
      assert.equal(entry.envelope.statement.author.principal, 'bridge:chat');
      assert.equal(entry.partition, emergency.partition, 'on the escalation\'s partition');
    }
    for (const body of bodies) assert.deepEqual([body.level, body.agentId], ['emergency', 'agent:ops-bot']);
    assert.ok(bodies.every((b) => b.escalation === bodies[0]?.escalation && /^[0-9a-f]{64}$/.test(b.escalation)));
    assert.match(bodies.find((b) => !b.ok)?.detail ?? '', /^NO_CHANNEL: /);
    const alert = receiver.deliveries.map((d) => JSON.parse(d.body) as { kind: string; escalation?: { proposal: string; level: string; operation: { actionType: string } } }).find((d) => d.kind === 'agent-ledger.escalation' && d.escalation?.proposal === critical.statementHash);
    assert.deepEqual([alert?.escalation?.level, alert?.escalation?.operation.actionType], ['emergency', 'shell.exec']);

    // Tier 3, nobody answers, Telegram is back: the admin escalation reaches the admins' first channel and stops there.
    telegram.down = false;
    const deploy = clientFor(home, running, 'agent-deploy-bot');
    const high = await deploy.propose(proposal({ targetResource: 'repo/payments-service', scope: 'main', args: { command: 'git push --force origin main' }, query: 'ship it', context: { environment: 'production', crisis: false, run: statementNonce() } }));
    assert.deepEqual((await deploy.awaitDecision(high.statementHash, 30_000)).code, 'TIMEOUT');
    const [admin] = await notifications(high.statementHash, 1);
    assert.deepEqual(
      (({ level, channel, ok }) => ({ level, channel, ok }))(admin?.envelope.statement.body as { level: string; channel: string; ok: boolean }),
      { level: 'admin', channel: 'telegram', ok: true },
    );
    const shown = await eventually(async () => telegram.sent.find((m) => m.text.startsWith('ESCALATION (admin)') && m.text.includes(high.statementHash)), 20_000, 'the admin alert on Telegram');
    assert.ok(shown.text.includes('action: shell.exec') && shown.text.includes('agent: agent:deploy-bot'));
  });

  test('a restarted notifier re-sends only the requests still waiting on the log', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const { statementHash } = await support.propose(emailCustomer());
    const first = await eventually(async () => receiver.deliveries.find((d) => (JSON.parse(d.body) as Delivered).pending?.proposal === statementHash), 20_000, 'the webhook delivery');
    const request = (JSON.parse(first.body) as Delivered).pending.request;
    const second = await serve(home, ['notify']);
    try {
      // start() has folded the whole log: earlier requests are answered, timed out or decided.
      assert.deepEqual(second.notifier?.resumed, [request]);
      const again = await eventually(async () => receiver.deliveries.find((d) => d !== first && (JSON.parse(d.body) as Delivered).pending?.request === request), 20_000, 'the re-sent delivery');
      const delivered = JSON.parse(again.body) as Delivered;
      const answer = JSON.stringify({ callbackId: delivered.callbackId, request, answer: 'deny', approver: 'bob' });
      const res = await fetch(second.webhookCallbackUrl as string, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ledger-signature': sign(answer) }, body: answer });
      assert.equal(res.status, 200);
      const decision = await support.awaitDecision(statementHash, 20_000);
      assert.deepEqual([decision.outcome, decision.code], ['deny', 'HUMAN_DENIED']);
    } finally {
      await second.stop();
    }
  });
});
