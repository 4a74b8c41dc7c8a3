import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, nodeEd25519, verifyEnvelopeSignatures, type Envelope } from '@agent-ledger/core';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { assertJsonFailure, assertJsonSuccess, jsonObject } from './cli-json-shape.js';
import { eventually, freshHome, start } from './live.js';
import { signedFetch } from '@agent-ledger/client';

// The admin CLI against a live ledger: grants proposed, co-signed,
// re-authorised, revoked and listed, keys registered (also by a partly signed
// statement passed between admins), revoked and listed, all with the CLI
// alone; refusals come back with their ReasonCode (exit 1), usage errors and
// outages with an operational code (exit 2), never a stack trace.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

interface Run {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

function ledger(...args: string[]): Promise<Run> {
  return ledgerWith({}, ...args);
}

function ledgerWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
      resolve({ status: code, stdout, stderr });
    });
  });
}

/** The one --json object of a run, checked for the shape of its kind: a success, or a failure whose exit status goes with its code. */
function json(run: Run): Record<string, unknown> & { ok: boolean; error?: { code: string; retryable: boolean } } {
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  const object = jsonObject(run, 'ledger --json');
  if (object['ok'] === true) assertJsonSuccess(run, 'ledger --json');
  else assertJsonFailure(run, 'ledger --json', String((object['error'] as { code?: unknown } | undefined)?.code));
  return object as Record<string, unknown> & { ok: boolean; error?: { code: string; retryable: boolean } };
}

describe('admin CLI on a live ledger', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let api: string;
  const as = (principal: string): string[] => ['--as', principal, '--home', home.dir, '--api', api, '--json'];

  before(async () => {
    home = freshHome();
    running = await start(home, ['api', 'sequencer', 'projector']);
    api = running.apiUrl as string;
  });
  after(async () => {
    await running?.stop();
  });

  test('a grant proposed, refused when self-co-signed, co-signed, listed, re-authorised, revoked', { timeout: 120_000 }, async () => {
    const propose = json(
      await ledger('grant', 'propose', '--grant-id', 'cli-g1', '--agent', 'agent:build-bot', '--action', 'shell.exec', '--target', 'host/build-01',
        '--scope', 'workspace', '--tier', '2', '--for', '7d', '--wait', ...as('admin:alice')),
    );
    assert.equal(propose.ok, true);
    assert.equal(propose.status, 'admitted');
    assert.equal(typeof propose.authorityIndex, 'number');
    assert.equal(propose.tookEffect, false);
    assert.match(String(propose.statementHash), /^[0-9a-f]{64}$/);

    const self = await ledger('grant', 'cosign', 'cli-g1', ...as('admin:alice'));
    assert.equal(self.status, 1);
    assert.equal(json(self).error?.code, 'SEPARATION_OF_DUTIES');

    // Once the log has sealed the proposal, the co-signer is shown the signed statement itself.
    await eventually(async () => ((await signedFetch(home.key('admin-alice'))(`${api}/v1/receipts/0/${propose.authorityIndex as number}`)).status === 200 ? true : undefined), 30_000, 'the proposal checkpointed');
    const cosign = json(await ledger('grant', 'cosign', 'cli-g1', '--wait', ...as('admin:bob')));
    assert.deepEqual([cosign.ok, cosign.write, cosign.tookEffect, cosign.verified], [true, propose.statementHash, true, true]);
    assert.deepEqual(cosign.signed, propose.grant);

    const list = json(await ledger('grant', 'list', '--agent', 'agent:build-bot', '--home', home.dir, '--api', api, '--json'));
    const listed = (list.grants as { grantId: string; status: string; cosignedBy: string }[]).find((g) => g.grantId === 'cli-g1');
    assert.deepEqual([listed?.status, listed?.cosignedBy], ['active', 'admin:bob']);

    const reauth = json(await ledger('grant', 'reauthorize', 'cli-g1', '--for', '10d', '--wait', ...as('admin:bob')));
    assert.deepEqual([reauth.ok, reauth.tookEffect], [true, false]);
    const cosignReauth = json(await ledger('grant', 'cosign', 'cli-g1', '--wait', ...as('admin:alice')));
    assert.deepEqual([cosignReauth.writeKind, cosignReauth.write, cosignReauth.tookEffect], ['reauthorized', reauth.statementHash, true]);

    const revoke = json(await ledger('grant', 'revoke', 'cli-g1', '--reason', 'no longer needed', '--wait', ...as('admin:alice')));
    assert.deepEqual([revoke.ok, revoke.status], [true, 'admitted']);
    const again = await ledger('grant', 'revoke', 'cli-g1', '--reason', 'twice', ...as('admin:bob'));
    assert.equal(again.status, 1);
    assert.equal(json(again).error?.code, 'POLICY_VIOLATION');
    const nothing = await ledger('grant', 'cosign', 'cli-g1', ...as('admin:bob'));
    assert.equal(nothing.status, 2);
    assert.equal(json(nothing).error?.code, 'NOT_FOUND');
  });

  test('an agent key cannot write grants; an unknown grant is not found', { timeout: 60_000 }, async () => {
    const byAgent = await ledger('grant', 'propose', '--grant-id', 'cli-self', '--agent', 'agent:build-bot', '--action', 'shell.exec', '--target', 'host/build-01',
      '--scope', 'workspace', '--tier', '1', '--for', '1d', ...as('agent:build-bot'));
    assert.equal(byAgent.status, 1);
    assert.equal(json(byAgent).error?.code, 'KEY_ROLE');
    // The trail of a grant that does not exist: the API's answer, whichever it is, typed (refusal exit 1, operational exit 2).
    const unknown = await ledger('grant', 'cosign', 'no-such-grant', ...as('admin:bob'));
    const code = json(unknown).error?.code;
    assert.ok(code === 'GRANT_MISSING' || code === 'NOT_FOUND', String(code));
    assert.equal(unknown.status, code === 'NOT_FOUND' ? 2 : 1);
    // Judged by the sequencer: --wait reports its rejection with the code it recorded.
    const revokeUnknown = await ledger('grant', 'revoke', 'no-such-grant', '--reason', 'r', '--wait', ...as('admin:bob'));
    assert.equal(revokeUnknown.status, 1);
    assert.equal(json(revokeUnknown).error?.code, 'GRANT_MISSING');
  });

  test('constraints are passed through as JSON in the signed grant, and the ledger judges them', { timeout: 60_000 }, async () => {
    const propose = (id: string, ...constraint: string[]): Promise<Run> =>
      ledger('grant', 'propose', '--grant-id', id, '--agent', 'agent:billing-bot', '--action', 'payment.refund', '--target', 'payments/refunds',
        '--scope', 'eu', '--tier', '2', '--for', '1d', ...constraint, ...as('admin:alice'));
    const answer = json(await propose('cli-c1', '--constraint', 'amount={"kind":"range","max":20}', '--constraint', 'currency={"kind":"equals","value":"EUR"}', '--wait'));
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.deepEqual((answer.grant as { constraints: unknown }).constraints, [{ kind: 'range', max: 20, path: 'amount' }, { kind: 'equals', value: 'EUR', path: 'currency' }]);
    const whole = json(await propose('cli-c3', '--constraints-json', '[{"kind":"pattern","path":"reference","pattern":"RMA-*"}]'));
    assert.equal(whole.ok, true, JSON.stringify(whole));
    // A shape the ledger does not know: its refusal, with its code.
    const unknownKind = await propose('cli-c4', '--constraint', 'amount={"kind":"below","value":20}');
    assert.equal(unknownKind.status, 1);
    assert.equal(json(unknownKind).error?.code, 'SCHEMA_INVALID');
    // Not JSON, or not an object: the CLI's own BAD_ARGUMENT.
    for (const bad of [['--constraint', 'amount={max:20}'], ['--constraint', 'amount=20'], ['--constraints-json', '[1,'], ['--constraint', 'a={"kind":"range"}', '--constraints-json', '[]']]) {
      const r = await propose('cli-c2', ...bad);
      assert.equal(r.status, 2, bad.join(' '));
      assert.equal(json(r).error?.code, 'BAD_ARGUMENT');
    }
  });

  test('keys registered, listed and revoked; a statement signed by two admins passes between them as a file', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-admin-'));
    const newKey = join(dir, 'new-bot.key');
    const keygen = await ledger('keygen', '--principal', 'agent:new-bot', '--out', newKey);
    assert.equal(keygen.status, 0, keygen.stderr);
    const keyId = keygen.stdout.trim();

    // A first agent key: one admin and the key's own proof of possession.
    const register = json(await ledger('key', 'register', '--principal', 'agent:new-bot', '--roles', 'agent', '--new-key', newKey, '--risk-threshold', '1.5', '--wait', ...as('admin:alice')));
    assert.deepEqual([register.ok, register.status, register.signedBy], [true, 'admitted', [home.key('admin-alice').keyId, keyId]], JSON.stringify(register));
    await running.follower.waitFor((register.authorityIndex as number) + 1);
    const listed = json(await ledger('key', 'list', '--principal', 'agent:new-bot', '--home', home.dir, '--json'));
    assert.deepEqual((listed.keys as { keyId: string; status: string }[]).map((k) => [k.keyId, k.status]), [[keyId, 'active']]);

    const revoke = json(await ledger('key', 'revoke', keyId, '--reason', 'rotated', '--wait', ...as('admin:bob')));
    assert.deepEqual([revoke.ok, revoke.status], [true, 'admitted']);
    await running.follower.waitFor((revoke.authorityIndex as number) + 1);
    const after = json(await ledger('key', 'list', '--principal', 'agent:new-bot', '--home', home.dir, '--json'));
    assert.deepEqual((after.keys as { status: string }[]).map((k) => k.status), ['revoked']);
    const all = json(await ledger('key', 'list', '--home', home.dir, '--json'));
    assert.ok((all.keys as { principal: string }[]).some((k) => k.principal === 'admin:alice'));
    assert.ok(!(all.keys as { keyId: string }[]).some((k) => k.keyId === keyId), 'revoked keys only with --all');

    // The README's key-compromise step 1: the revoked agent gets a replacement key, a further key of a known principal (two admins, proof of possession).
    const replacement = join(dir, 'new-bot-2.key');
    const replacementId = (await ledger('keygen', '--principal', 'agent:new-bot', '--out', replacement)).stdout.trim();
    const replaceFile = join(dir, 'replace.json');
    assert.equal(json(await ledger('key', 'register', '--principal', 'agent:new-bot', '--roles', 'agent', '--new-key', replacement, '--out', replaceFile, ...as('admin:alice'))).ok, true);
    const replaced = json(await ledger('key', 'cosign', replaceFile, '--submit', '--wait', ...as('admin:bob')));
    assert.deepEqual([replaced.ok, replaced.status], [true, 'admitted'], JSON.stringify(replaced));
    await running.follower.waitFor((replaced.authorityIndex as number) + 1);
    const rotated = json(await ledger('key', 'list', '--principal', 'agent:new-bot', '--home', home.dir, '--json'));
    assert.deepEqual((rotated.keys as { keyId: string; status: string }[]).map((k) => [k.keyId, k.status]), [[keyId, 'revoked'], [replacementId, 'active']]);

    // The README's onboarding of a privileged key whose file stays with its owner: alice writes the statement
    // by key id, the owner proves possession on the file, bob adds his signature and submits.
    const second = join(dir, 'second.key');
    const secondId = (await ledger('keygen', '--principal', 'approver:zoe', '--out', second)).stdout.trim();
    const file = join(dir, 'register-zoe.json');
    const partly = json(await ledger('key', 'register', '--principal', 'approver:zoe', '--roles', 'approver', '--key-id', secondId, '--out', file, ...as('admin:alice')));
    assert.deepEqual([partly.ok, partly.statementHash], [true, undefined], 'written, not submitted');
    assert.equal(json(await ledger('key', 'cosign', file, '--signer-key', second, '--home', home.dir, '--api', api, '--json')).ok, true);
    assert.equal(json(await ledger('key', 'cosign', file, ...as('admin:bob'))).ok, true);
    const twice = await ledger('key', 'cosign', file, ...as('admin:bob'));
    assert.equal(twice.status, 2);
    assert.equal(json(twice).error?.code, 'BAD_ARGUMENT');
    const envelope = JSON.parse(readFileSync(file, 'utf8')) as Envelope;
    assert.deepEqual(
      verifyEnvelopeSignatures(envelope, canonicalJson(envelope.statement), nodeEd25519),
      [home.key('admin-alice').keyId, secondId, home.key('admin-bob').keyId],
    );
    // Two admins other than the subject and the key's own proof of possession: four eyes (SPEC.md section 7.3).
    const submitted = json(await ledger('key', 'submit', file, '--wait', '--home', home.dir, '--api', api, '--json'));
    assert.deepEqual([submitted.ok, submitted.status], [true, 'admitted'], JSON.stringify(submitted));
    await running.follower.waitFor((submitted.authorityIndex as number) + 1);
    const zoe = json(await ledger('key', 'list', '--principal', 'approver:zoe', '--home', home.dir, '--json'));
    assert.deepEqual((zoe.keys as { keyId: string; roles: string[] }[]).map((k) => [k.keyId, k.roles]), [[secondId, ['approver']]]);

    // One admin alone cannot register an approver; without the key's own signature nothing registers either.
    const third = join(dir, 'third.key');
    await ledger('keygen', '--principal', 'approver:yann', '--out', third);
    const alone = await ledger('key', 'register', '--principal', 'approver:yann', '--roles', 'approver', '--new-key', third, ...as('admin:alice'));
    assert.equal(alone.status, 1);
    assert.equal(json(alone).error?.code, 'SEPARATION_OF_DUTIES');
    const unproven = await ledger('key', 'register', '--principal', 'agent:unproven-bot', '--roles', 'agent', '--key-id', secondId.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')), ...as('admin:alice'));
    assert.equal(unproven.status, 1);
    assert.ok(['INVALID_SIGNATURE', 'WEAK_KEY'].includes(String(json(unproven).error?.code)), JSON.stringify(json(unproven)));
  });

  test('status and doctor of a running installation: the success object with the report', { timeout: 60_000 }, async () => {
    // These need the broker and Postgres up: the local --json test parses their failures only.
    const status = assertJsonSuccess(await ledger('status', '--home', home.dir, '--api', api, '--json'), 'status --json');
    assert.deepEqual([(status['broker'] as { up: boolean }).up, (status['postgres'] as { up: boolean }).up, (status['api'] as { ready: boolean }).ready], [true, true, true]);
    assert.equal((status['partitions'] as unknown[]).length, home.config.eventPartitions + 1);
    const doctor = assertJsonSuccess(await ledger('doctor', '--home', home.dir, '--json'), 'doctor --json');
    assert.ok((doctor['checks'] as { level: string }[]).every((c) => c.level !== 'fail'), JSON.stringify(doctor['checks']));
  });

  test('usage errors and outages are operational codes, exit 2, one line', { timeout: 60_000 }, async () => {
    const missing = await ledger('grant', 'revoke', 'cli-g1', '--home', home.dir, '--api', api);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^ledger: BAD_ARGUMENT: /);
    const badRole = await ledger('key', 'register', '--principal', 'agent:x', '--roles', 'wizard', '--key-id', 'a'.repeat(64), ...as('admin:alice'));
    assert.equal(badRole.status, 2);
    assert.equal(json(badRole).error?.code, 'BAD_ARGUMENT');
    const noKey = await ledger('grant', 'revoke', 'cli-g1', '--reason', 'r', ...as('admin:nobody'));
    assert.equal(noKey.status, 2);
    assert.equal(json(noKey).error?.code, 'BAD_CONFIGURATION');
    const down = await ledger('grant', 'list', '--api', 'http://127.0.0.1:1', '--home', home.dir, '--json');
    assert.equal(down.status, 2);
    assert.deepEqual(json(down).error, { ...json(down).error, code: 'UNAVAILABLE', retryable: true });
    const downHuman = await ledger('grant', 'revoke', 'cli-g1', '--reason', 'r', '--as', 'admin:alice', '--home', home.dir, '--api', 'http://127.0.0.1:1');
    assert.equal(downHuman.status, 2);
    assert.match(downHuman.stderr, /^ledger: UNAVAILABLE: /);
    // The broker behind key list unreachable: UNAVAILABLE, not the NO_CHANNEL refusal.
    const noBroker = await ledgerWith({ LEDGER_KAFKA_BROKERS: '127.0.0.1:1' }, 'key', 'list', '--home', home.dir, '--json');
    assert.equal(noBroker.status, 2);
    assert.deepEqual(json(noBroker).error, { ...json(noBroker).error, code: 'UNAVAILABLE', retryable: true });
    assert.equal(noBroker.stderr, '', 'one typed answer, no broker log lines');
    // A server that fails: INTERNAL for the CLI, whatever refusal code its body claims.
    const failing = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'INTEGRITY_FAILURE', message: 'internal error', retryable: true } }));
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
    try {
      const list = await ledger('grant', 'list', '--api', failingUrl, '--home', home.dir, '--json');
      assert.equal(list.status, 2);
      assert.equal(json(list).error?.code, 'INTERNAL');
      const trail = await ledger('grants', 'trail', 'cli-g1', '--api', failingUrl, '--home', home.dir);
      assert.equal(trail.status, 2);
      assert.match(trail.stderr, /^ledger: INTERNAL: /);
      const approve = await ledger('approve', '--list', '--api', failingUrl, '--home', home.dir);
      assert.equal(approve.status, 2);
      assert.match(approve.stderr, /^ledger: INTERNAL: /);
    } finally {
      failing.close();
    }
    for (const args of [['grant', 'propose'], ['grant', 'cosign'], ['grant', 'revoke'], ['grant', 'reauthorize'], ['grant', 'list'], ['key', 'register'], ['key', 'cosign'], ['key', 'submit'], ['key', 'revoke'], ['key', 'list']]) {
      const help = await ledger(...args, '--help');
      assert.equal(help.status, 0, args.join(' '));
      assert.match(help.stdout, new RegExp(`Usage: ledger ${args.join(' ')}`));
      if (args[1] !== 'list' || args[0] === 'grant') assert.match(help.stdout, /--json/);
    }
  });
});
