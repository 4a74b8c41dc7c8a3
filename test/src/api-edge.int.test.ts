import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createStatement, eventPartitionOf, nodeEd25519, signStatement, type Envelope, type Signer } from '@agent-ledger/core';
import { installationOf, signRead } from '@agent-ledger/client';
import { createKafkaBus, type LogBus } from '@agent-ledger/kafka';
import { topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { eventually, freshHome, proposal, start } from './live.js';

// The HTTP edge from an attacker's side: every 4xx/5xx is a typed
// {error:{code,message,retryable}}; bad input never reaches Postgres; a
// foreign Host (DNS rebinding) and compressed bodies are refused; what the
// API can judge at once (replay, stale or future issuedAt, a flood) is
// answered at once, recorded on the log and on its refusal topic.

process.env.LEDGER_API_RATE_LIMIT = '8/0.5';
process.env.LEDGER_API_REFUSAL_RECORD_LIMIT = '4/0.2';

interface Answer {
  status: number;
  body: { error?: { code: string; message: string; retryable: boolean } } & Record<string, unknown>;
}

/** The key raw GETs are signed with (an admin's: the edge is tested behind authentication; read-auth.local.test.ts tests it). */
let reader: Signer | undefined;
/** The installation those reads are signed for. */
let audience = '';

/** One raw HTTP request (any Host, any header, any path bytes); a GET is signed by {@link reader}. */
function raw(base: string, path: string, options: { method?: string; host?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<Answer> {
  const url = new URL(base);
  const method = options.method ?? 'GET';
  const signed: Record<string, string> = method === 'GET' && reader !== undefined ? { authorization: signRead(reader, method, path, { audience }) } : {};
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers: { host: options.host ?? url.host, ...signed, ...(options.headers ?? {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Answer['body'] = {};
          try {
            body = JSON.parse(text) as Answer['body'];
          } catch {
            body = { text } as Answer['body'];
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** The typed error body every failure carries. */
function assertTyped(answer: Answer, status: number, code: string, what: string): void {
  assert.equal(answer.status, status, `${what}: status (${JSON.stringify(answer.body)})`);
  assert.equal(answer.body.error?.code, code, `${what}: code`);
  assert.equal(typeof answer.body.error?.message, 'string', `${what}: message`);
  assert.equal(typeof answer.body.error?.retryable, 'boolean', `${what}: retryable`);
}

describe('the HTTP edge', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let base: string;
  let bus: LogBus;

  before(async () => {
    home = freshHome();
    running = await start(home, ['api', 'sequencer', 'gate', 'projector', 'siem']);
    base = running.apiUrl as string;
    reader = home.key('admin-alice');
    audience = installationOf(home.genesis());
    bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'edge-check' });
  });
  after(async () => {
    await bus?.close();
    await running?.stop();
  });

  function signed(keyName: string, issuedAt?: Date): { envelope: Envelope; text: string } {
    const agent = home.key(keyName);
    const statement = createStatement('proposal.submitted', { ...proposal(), agentId: agent.principal }, agent, issuedAt);
    const envelope = signStatement(statement, [agent], nodeEd25519);
    return { envelope, text: JSON.stringify(envelope) };
  }

  const post = (text: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> =>
    raw(base, '/v1/statements', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });

  test('NUL bytes and control characters in path and query are 400 BAD_ARGUMENT, never a 5xx or an integrity code', async () => {
    for (const path of ['/v1/grants/a%00b/trail', '/v1/grants?agentId=agent%3Abuild%00bot', '/v1/enforcement?agentId=%00', '/v1/grants/x%0Ay/trail', '/v1/pending?limit=%00']) {
      assertTyped(await raw(base, path), 400, 'BAD_ARGUMENT', path);
    }
  });

  test('bad URL encoding, over-long parameters, repeated and bad query values: 400 BAD_ARGUMENT', async () => {
    assertTyped(await raw(base, '/v1/grants/%E0%A4%A/trail'), 400, 'BAD_ARGUMENT', 'truncated percent-encoding');
    assertTyped(await raw(base, '/v1/grants/%ED%A0%80/trail'), 400, 'BAD_ARGUMENT', 'encoded lone surrogate');
    assertTyped(await raw(base, `/v1/grants/${'x'.repeat(5000)}/trail`), 400, 'BAD_ARGUMENT', 'over-long parameter');
    assertTyped(await raw(base, `/v1/grants/${'x'.repeat(257)}/trail`), 400, 'BAD_ARGUMENT', 'grant id over 256 characters');
    assertTyped(await raw(base, '/v1/pending?limit=1&limit=2'), 400, 'BAD_ARGUMENT', 'repeated query key');
    assertTyped(await raw(base, '/v1/pending?limit=0'), 400, 'BAD_ARGUMENT', 'limit 0');
    assertTyped(await raw(base, '/v1/pending?limit=-1'), 400, 'BAD_ARGUMENT', 'negative limit');
    assertTyped(await raw(base, `/v1/enforcement?agentId=${'a'.repeat(2000)}`), 400, 'BAD_ARGUMENT', 'over-long query value');
    assertTyped(await raw(base, '/v1/decisions/not-a-hash'), 400, 'BAD_ARGUMENT', 'bad proposal hash');
    assertTyped(await raw(base, '/v1/statements/not-an-id'), 400, 'BAD_ARGUMENT', 'bad statement id');
    assertTyped(await raw(base, '/no/such/route'), 404, 'NOT_FOUND', 'unknown route');
    assertTyped(await raw(base, `/v1/decisions/${'0'.repeat(64)}/trail`), 404, 'NOT_FOUND', 'unknown decision');
  });

  test('bad bodies are typed: not JSON, wrong type, oversize, compressed (415)', async () => {
    assertTyped(await post('{"statement":'), 400, 'SCHEMA_INVALID', 'not JSON');
    assertTyped(await post('{}', { 'content-type': 'text/plain' }), 400, 'SCHEMA_INVALID', 'wrong content type');
    assertTyped(await post(Buffer.alloc(300 * 1024, 0x20)), 400, 'SCHEMA_INVALID', 'oversize');
    const { text } = signed('agent-build-bot');
    assertTyped(await post(gzipSync(text), { 'content-encoding': 'gzip' }), 415, 'BAD_ARGUMENT', 'gzip body');
    assertTyped(await post(text, { 'content-encoding': 'br' }), 415, 'BAD_ARGUMENT', 'brotli label');
    assertTyped(await raw(base, '/v1/pending', { headers: { 'content-encoding': 'deflate' } }), 415, 'BAD_ARGUMENT', 'encoded GET');

    // Refused before the body was read (content type, size): recorded like the rest, under the sender's budget.
    const topics = topicNames(home.config.topicPrefix);
    const onTopic = await eventually(async () => {
      const found: string[] = [];
      for await (const r of bus.readRange(topics.refusal('SCHEMA_INVALID'), 0, '0')) found.push(r.value.toString());
      return found.some((r) => r.includes('content type must be application/json')) && found.some((r) => r.includes('body too large')) ? found : undefined;
    }, 30_000, 'the wrong content type and the oversize body on the SCHEMA_INVALID refusal topic');
    assert.ok(onTopic.length >= 3);
  });

  test('a foreign Host header is refused on the API and its pages (DNS rebinding); loopback names on its port are served', async () => {
    const port = new URL(base).port;
    for (const host of ['evil.example.com', `evil.example.com:${port}`, `127.0.0.1:${Number(port) + 1}`, 'localhost', `127.0.0.1.evil.example:${port}`]) {
      for (const path of ['/readyz', '/v1/pending', '/approve', '/metrics']) assertTyped(await raw(base, path, { host }), 421, 'BAD_ARGUMENT', `${host} ${path}`);
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      assert.equal((await raw(base, '/v1/pending', { host })).status, 200, host);
    }
    // HTTP/1.0 without a Host header at all.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(`GET /v1/pending HTTP/1.0\r\nauthorization: ${signRead(reader as Signer, 'GET', '/v1/pending', { audience })}\r\n\r\n`));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.[01] 400 /);
    assert.match(answer, /"code":"BAD_ARGUMENT"/);
  });

  test('stale, future and replayed statements are answered at once with REPLAY, recorded on the log and on the REPLAY topic', async () => {
    const freshness = running.follower.current().state.config?.freshnessMs ?? 0;
    assert.ok(freshness > 0);
    const stale = signed('agent-ops-bot', new Date(Date.now() - freshness - 60_000));
    assertTyped(await post(stale.text), 409, 'REPLAY', 'stale');
    const future = signed('agent-ops-bot', new Date(Date.now() + freshness + 60_000));
    assertTyped(await post(future.text), 409, 'REPLAY', 'future');
    const once = signed('agent-ops-bot');
    const first = await post(once.text);
    assert.equal(first.status, 202);
    assertTyped(await post(once.text), 409, 'REPLAY', 'replay');

    // The accepted one is admitted; the refused ones have their status and are on the log.
    const admitted = await eventually(async () => {
      const s = await raw(base, `/v1/statements/${once.envelope.statement.id}`);
      return s.body['status'] === 'admitted' ? s.body : undefined;
    }, 30_000, 'the accepted statement admitted');
    assert.equal(typeof admitted['index'], 'number');
    const refusedStatus = await raw(base, `/v1/statements/${stale.envelope.statement.id}`);
    assert.deepEqual([refusedStatus.body['status'], refusedStatus.body['code']], ['refused', 'REPLAY']);

    const topics = topicNames(home.config.topicPrefix);
    const onTopic = await eventually(async () => {
      const found: Record<string, unknown>[] = [];
      for await (const r of bus.readRange(topics.refusal('REPLAY'), 0, '0')) found.push(JSON.parse(r.value.toString()) as Record<string, unknown>);
      return found.length >= 3 ? found : undefined;
    }, 30_000, 'three REPLAY refusals on the refusal topic');
    assert.ok(onTopic.every((r) => r['status_code'] === 'REPLAY'));
  });

  test('the status of a statement another process submitted comes from the projection, not only from this API', async () => {
    const elsewhere = signed('agent-ops-bot');
    const topics = topicNames(home.config.topicPrefix);
    const partition = eventPartitionOf(home.key('agent-ops-bot').principal, home.config.eventPartitions);
    // Straight to intake, as another API process would publish it: this API never saw it.
    await bus.publish([{ topic: topics.intake, partition, key: null, value: elsewhere.text }]);
    const status = await eventually(async () => {
      const s = await raw(base, `/v1/statements/${elsewhere.envelope.statement.id}`);
      return s.status === 200 ? s.body : undefined;
    }, 30_000, 'the statement found through the projection');
    assert.deepEqual([status['status'], status['partition'], typeof status['index']], ['admitted', partition, 'number']);
    assertTyped(await raw(base, '/v1/statements/01900000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND', 'an id nobody submitted');
  });

  test('a per-principal rate limit refuses with RATE_LIMIT (429, retryable), counted; recorded refusals are bounded', async () => {
    const answers: Answer[] = [];
    for (let n = 0; n < 30; n++) answers.push(await post(signed('agent-support-bot').text));
    const limited = answers.filter((a) => a.status === 429);
    assert.ok(answers.filter((a) => a.status === 202).length >= 8, 'the burst is served');
    assert.ok(limited.length >= 15, `most of the flood is refused (${limited.length})`);
    for (const a of limited) assertTyped(a, 429, 'RATE_LIMIT', 'flood');
    assert.ok(limited.every((a) => a.body.error?.retryable === true));
    // Another principal is not affected.
    assert.equal((await post(signed('agent-build-bot').text)).status, 202);
    const metrics = await raw(base, '/metrics');
    const text = String(metrics.body['text']);
    const count = (name: string): number => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 'NaN');
    assert.equal(count('ledger_api_refusals_total\\{code="RATE_LIMIT"\\}'), limited.length);
    const recorded = count('ledger_api_refusals_recorded_total\\{code="RATE_LIMIT"\\}');
    const unrecorded = count('ledger_api_refusals_unrecorded_total\\{reason="budget"\\}');
    assert.ok(recorded >= 1 && recorded <= 8, `refusals written to the log are bounded (${recorded})`);
    assert.ok(unrecorded >= limited.length - 8, `the rest are counted, not written (${unrecorded})`);
    // Operational errors are counted apart from refusals.
    assert.match(text, /^ledger_api_operational_errors_total\{code="BAD_ARGUMENT"\} \d+/m);
    assert.doesNotMatch(text, /ledger_api_refusals_total\{code="(BAD_ARGUMENT|NOT_FOUND|INTERNAL|UNAVAILABLE)"\}/);
  });
});
