import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { LedgerClient, installationOf, signRead } from '@agent-ledger/client';
import type { Signer } from '@agent-ledger/core';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { eventually, freshHome, proposal, start } from './live.js';
import { freePort } from './private-stack.js';

// Signed reads across API processes, from the attacker's side: two `ledger
// serve --target api` processes of one installation behind a (notional) load
// balancer, sharing one Postgres. A read accepted by one is refused by the
// other, both ways; the same read fired at both at once is answered once; a
// process restarted within the read's window still refuses it; another
// agent's decision and an approver's out-of-scope answer get the same typed
// answers through either process.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

interface Answer {
  readonly status: number;
  readonly body: { error?: { code: string; message: string; retryable: boolean } } & Record<string, unknown>;
}

/** One API process of the installation, a child process of its own. */
class ApiProcess {
  readonly port: number;
  readonly base: string;
  #child: ChildProcess | undefined;

  constructor(readonly home: LedgerHome, readonly name: string, port: number) {
    this.port = port;
    this.base = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const log = createWriteStream(join(this.home.dir, `${this.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [bin, 'serve', '--home', this.home.dir, '--target', 'api'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LEDGER_API_PORT: String(this.port) } });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.#child = child;
    await eventually(async () => {
      const ready = await fetch(`${this.base}/readyz`).catch(() => undefined);
      return ready?.status === 200 ? true : undefined;
    }, 60_000, `${this.name} ready`);
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

async function get(base: string, path: string, authorization?: string): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { headers: authorization === undefined ? {} : { authorization } });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Answer['body'] };
}

function assertTyped(answer: Answer, status: number, code: string, what: string): void {
  assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  assert.equal(answer.body.error?.code, code, what);
  assert.equal(typeof answer.body.error?.message, 'string', what);
  assert.equal(typeof answer.body.error?.retryable, 'boolean', what);
}

describe('two API processes of one installation sharing one Postgres', { timeout: 600_000 }, () => {
  let home: LedgerHome;
  let core: RunningLedger;
  let one: ApiProcess;
  let two: ApiProcess;
  let audience: string;
  let admin: Signer;
  let db: pg.Client;

  const sign = (as: Signer, path: string): string => signRead(as, 'GET', path, { audience });

  before(async () => {
    home = freshHome();
    audience = installationOf(home.genesis());
    admin = home.key('admin-alice');
    core = await start(home, ['sequencer', 'gate', 'projector', 'timer']);
    one = new ApiProcess(home, 'api-one', await freePort());
    two = new ApiProcess(home, 'api-two', await freePort());
    await Promise.all([one.start(), two.start()]);
    db = new pg.Client({ connectionString: home.config.pgUrl });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await one?.stop();
    await two?.stop();
    await core?.stop();
  });

  test('a read accepted by one process is refused by the other, in both directions, with a typed 401', async () => {
    const first = sign(admin, '/v1/pending');
    assert.equal((await get(one.base, '/v1/pending', first)).status, 200);
    assertTyped(await get(two.base, '/v1/pending', first), 401, 'UNAUTHENTICATED', 'replayed on the other process');
    const second = sign(admin, '/v1/pending');
    assert.equal((await get(two.base, '/v1/pending', second)).status, 200);
    assertTyped(await get(one.base, '/v1/pending', second), 401, 'UNAUTHENTICATED', 'replayed the other way');
    // The store holds each accepted read once.
    const rows = await db.query<{ n: string }>('SELECT count(*) AS n FROM read_nonces WHERE key_id = $1', [admin.keyId]);
    assert.ok(Number(rows.rows[0]?.n) >= 2);
  });

  test('one read fired at both processes at once, ten times: exactly one answer, nine typed refusals, no 500', async () => {
    for (let round = 0; round < 5; round++) {
      const header = sign(admin, '/v1/pending?limit=5');
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 === 0 ? one.base : two.base, '/v1/pending?limit=5', header)));
      assert.equal(answers.filter((a) => a.status === 200).length, 1, `round ${round}: ${answers.map((a) => a.status).join(',')}`);
      for (const answer of answers.filter((a) => a.status !== 200)) assertTyped(answer, 401, 'UNAUTHENTICATED', `round ${round}`);
    }
  });

  test('a process restarted within the window still refuses a read it accepted before, and so does the other', async () => {
    const captured = sign(admin, '/v1/grants');
    assert.equal((await get(two.base, '/v1/grants', captured)).status, 200);
    await two.stop();
    await two.start();
    assertTyped(await get(two.base, '/v1/grants', captured), 401, 'UNAUTHENTICATED', 'replayed after the restart');
    assertTyped(await get(one.base, '/v1/grants', captured), 401, 'UNAUTHENTICATED', 'replayed on the other process');
    assert.equal((await get(two.base, '/v1/grants', sign(admin, '/v1/grants'))).status, 200, 'a fresh read after the restart');
  });

  test("a valid agent key asking either process for another agent's decision or proposal gets the answer for an unknown one", async () => {
    const billing = new LedgerClient({ baseUrl: one.base, signer: home.key('agent-billing-bot'), deciderKeys: [home.key('gate').keyId] });
    const submitted = await billing.submit(billing.sign('proposal.submitted', { ...proposal(), agentId: 'agent:billing-bot' }));
    await billing.awaitDecision(submitted.statementHash, 60_000);
    const ops = home.key('agent-ops-bot');
    const unknown = 'c'.repeat(64);
    const strip = (a: Answer): unknown => JSON.parse(JSON.stringify(a).replaceAll(submitted.statementHash, 'X').replaceAll(unknown, 'X'));
    for (const api of [one, two]) {
      for (const route of ['/v1/decisions/', '/v1/proposals/']) {
        const hidden = await get(api.base, `${route}${submitted.statementHash}`, sign(ops, `${route}${submitted.statementHash}`));
        const missing = await get(api.base, `${route}${unknown}`, sign(ops, `${route}${unknown}`));
        assert.deepEqual(strip(hidden), strip(missing), `${api.name} ${route}`);
        assert.ok(hidden.status === 404 || (hidden.status === 202 && hidden.body['decision'] === null), `${api.name} ${route}: ${hidden.status}`);
      }
      // Its own agent reads it through either process.
      const own = home.key('agent-billing-bot');
      assert.equal((await get(api.base, `/v1/decisions/${submitted.statementHash}`, sign(own, `/v1/decisions/${submitted.statementHash}`))).status, 200, api.name);
    }
  });

  test('an approver answering outside the open queue through either process: STALE_APPROVAL, typed, whatever the request', async () => {
    const dana = new LedgerClient({ baseUrl: two.base, signer: home.key('approver-dana'), deciderKeys: [] });
    for (const api of [one, two]) {
      const envelope = dana.sign('human.response', { agentId: 'agent:billing-bot', proposal: 'a'.repeat(64), request: 'b'.repeat(64), answer: 'approve', assurance: 'self_signed', platformIdentity: null });
      const response = await fetch(`${api.base}/v1/statements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
      assertTyped({ status: response.status, body: (await response.json()) as Answer['body'] }, 409, 'STALE_APPROVAL', `${api.name}: an unknown request`);
    }
    // The approver's queue through either process is the same: open requests only.
    for (const api of [one, two]) {
      const queue = await get(api.base, '/v1/pending', sign(home.key('approver-dana'), '/v1/pending'));
      assert.equal(queue.status, 200, api.name);
    }
  });
});
