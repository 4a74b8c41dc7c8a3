import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReadAuthorization, readSigningMessage, signRead } from '@agent-ledger/client';
import { nodeEd25519, toBase64, type Signer } from '@agent-ledger/core';
import { ReadAuthenticator, newSigner, type ReadKey, type ReadNonceStore } from '@agent-ledger/ledger';

// The signed-read check alone, from the attacker's side, with the shared
// nonce store in memory: every header that is not exactly one fresh read,
// signed for this installation by a registered key over this request, is
// UNAUTHENTICATED; the store, not this process's memory, decides a replay;
// an outage of the store or of the authority state is UNAVAILABLE, never a
// read let through.

const INSTALLATION = 'a1'.repeat(32);
const OTHER_INSTALLATION = 'b2'.repeat(32);
const NOW = 1_800_000_000_000;

/** A nonce store shared by several authenticators (two API processes), like read_nonces. */
class SharedNonces implements ReadNonceStore {
  readonly rows = new Map<string, number>();
  failing = false;
  async claim(keyId: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    if (this.failing) throw new Error('connection refused');
    const key = `${keyId}:${nonce}`;
    const expiry = this.rows.get(key);
    if (expiry !== undefined && expiry >= nowMs) return false;
    this.rows.set(key, expiresAtMs);
    return true;
  }
}

function setup(): { admin: Signer; revoked: Signer; nonces: SharedNonces; api: (options?: { keysDown?: boolean }) => ReadAuthenticator } {
  const admin = newSigner('admin:alice');
  const revoked = newSigner('agent:gone');
  const keys = new Map<string, ReadKey>([
    [admin.keyId, { principal: admin.principal, keyId: admin.keyId, roles: ['admin'] }],
    [revoked.keyId, { principal: revoked.principal, keyId: revoked.keyId, roles: ['agent'], revokedAt: 7 }],
  ]);
  const nonces = new SharedNonces();
  const api = (options: { keysDown?: boolean } = {}): ReadAuthenticator =>
    new ReadAuthenticator({
      installation: INSTALLATION,
      keyOf: (keyId) => {
        if (options.keysDown === true) throw new Error('authority follower failed');
        return keys.get(keyId);
      },
      nonces,
    });
  return { admin, revoked, nonces, api };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ACCEPTED';
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
}

const header = (signer: Signer, path: string, options: { audience?: string; nowMs?: number; nonce?: string; method?: string } = {}): string =>
  signRead(signer, options.method ?? 'GET', path, { audience: options.audience ?? INSTALLATION, nowMs: options.nowMs ?? NOW, ...(options.nonce === undefined ? {} : { nonce: options.nonce }) });

test('a fresh read signed for this installation is accepted once, by any API process sharing the store', async () => {
  const { admin, api } = setup();
  const first = api();
  const second = api();
  const signed = header(admin, '/v1/pending');
  const reader = await first.authenticate('GET', '/v1/pending', signed, {}, NOW);
  assert.deepEqual(reader, { kind: 'principal', principal: 'admin:alice', keyId: admin.keyId, roles: ['admin'] });
  assert.equal(await codeOf(first.authenticate('GET', '/v1/pending', signed, {}, NOW + 1)), 'UNAUTHENTICATED', 'replayed to the same process');
  assert.equal(await codeOf(second.authenticate('GET', '/v1/pending', signed, {}, NOW + 1)), 'UNAUTHENTICATED', 'replayed to another process');
  // A restarted process (new memory, same store) refuses it too, for as long as it is fresh.
  assert.equal(await codeOf(api().authenticate('GET', '/v1/pending', signed, {}, NOW + 29_000)), 'UNAUTHENTICATED', 'replayed after a restart');
  assert.equal(await codeOf(api().authenticate('GET', '/v1/pending', signed, {}, NOW + 31_000)), 'UNAUTHENTICATED', 'stale anyway');
});

test('the same nonce re-signed for another path by the same key is a replay; another key may use it', async () => {
  const { admin, api } = setup();
  const nonce = '0f'.repeat(16);
  const authenticator = api();
  await authenticator.authenticate('GET', '/v1/pending', header(admin, '/v1/pending', { nonce }), {}, NOW);
  assert.equal(await codeOf(api().authenticate('GET', '/v1/grants', header(admin, '/v1/grants', { nonce }), {}, NOW)), 'UNAUTHENTICATED');
  const other = newSigner('admin:bob');
  const keys = new Map<string, ReadKey>([[other.keyId, { principal: other.principal, keyId: other.keyId, roles: ['admin'] }]]);
  const nonces = new SharedNonces();
  const bob = new ReadAuthenticator({ installation: INSTALLATION, keyOf: (k) => keys.get(k), nonces });
  await bob.authenticate('GET', '/v1/pending', header(other, '/v1/pending', { nonce }), {}, NOW);
});

test('malformed, reordered, truncated, re-encoded and re-targeted headers are UNAUTHENTICATED, and nothing of them is remembered', async () => {
  const { admin, nonces, api } = setup();
  const authenticator = api();
  const good = header(admin, '/v1/pending?limit=10');
  const auth = parseReadAuthorization(good);
  assert.ok(auth !== undefined);
  const fields = good.slice('Ledger-Ed25519 '.length).split(',');
  // The last base64 character carries 4 padding bits: any other character there decodes to the same signature bytes.
  const last = auth.signature.at(-3) as string;
  const malleated = good.replace(`${auth.signature}`, `${auth.signature.slice(0, -3)}${last === 'A' ? 'B' : String.fromCharCode(last.charCodeAt(0) + 1)}==`);
  assert.deepEqual(Buffer.from(malleated.slice(malleated.indexOf('sig=') + 4), 'base64'), Buffer.from(auth.signature, 'base64'), 'the same bytes');
  const cases: Record<string, [string, string]> = {
    'base64 tail re-encoded': [malleated, '/v1/pending?limit=10'],
    'timestamp with a leading zero': [good.replace(`ts=${auth.timestampMs}`, `ts=0${auth.timestampMs}`), '/v1/pending?limit=10'],
    'fields reordered': [`Ledger-Ed25519 ${[fields[1], fields[0], ...fields.slice(2)].join(',')}`, '/v1/pending?limit=10'],
    'signature truncated': [good.slice(0, -4), '/v1/pending?limit=10'],
    'a field duplicated': [`${good},nonce=${auth.nonce}`, '/v1/pending?limit=10'],
    'upper-case hex': [good.replace(auth.keyId, auth.keyId.toUpperCase()), '/v1/pending?limit=10'],
    'scheme in lower case': [good.replace('Ledger-Ed25519', 'ledger-ed25519'), '/v1/pending?limit=10'],
    'padding around': [` ${good} `, '/v1/pending?limit=10'],
    'another query': [good, '/v1/pending?limit=1'],
    'the query dropped': [good, '/v1/pending'],
    'another path': [good, '/v1/grants?limit=10'],
    'a trailing slash': [good, '/v1/pending/?limit=10'],
    'over-long': [`${good}${'a'.repeat(400)}`, '/v1/pending?limit=10'],
    empty: ['', '/v1/pending?limit=10'],
  };
  for (const [what, [value, target]] of Object.entries(cases)) {
    assert.equal(await codeOf(authenticator.authenticate('GET', target, value, {}, NOW)), 'UNAUTHENTICATED', what);
  }
  assert.equal(await codeOf(authenticator.authenticate('HEAD', '/v1/pending?limit=10', good, {}, NOW)), 'UNAUTHENTICATED', 'another method');
  // A v1 header (no audience) is refused whatever it signs.
  const v1 = good.replace(/,aud=[0-9a-f]{64}/, '');
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending?limit=10', v1, {}, NOW)), 'UNAUTHENTICATED', 'a v1 header');
  assert.equal(nonces.rows.size, 0, 'no refused read claimed a nonce');
  // The untouched header still works once.
  await authenticator.authenticate('GET', '/v1/pending?limit=10', good, {}, NOW);
});

test('a read signed for another installation is refused, whether it names that installation or claims this one', async () => {
  const { admin, api } = setup();
  const authenticator = api();
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(admin, '/v1/pending', { audience: OTHER_INSTALLATION }), {}, NOW)), 'UNAUTHENTICATED', 'names the other');
  // Signed for the other installation, the aud field rewritten to this one: the signature no longer verifies.
  const forged = header(admin, '/v1/pending', { audience: OTHER_INSTALLATION }).replace(`aud=${OTHER_INSTALLATION}`, `aud=${INSTALLATION}`);
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', forged, {}, NOW)), 'UNAUTHENTICATED', 'claims this one');
});

test('stale, future, unknown, revoked and forged reads are refused; outages are UNAVAILABLE, never accepted', async () => {
  const { admin, revoked, nonces, api } = setup();
  const authenticator = api();
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(admin, '/v1/pending', { nowMs: NOW - 30_001 }), {}, NOW)), 'UNAUTHENTICATED', 'stale');
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(admin, '/v1/pending', { nowMs: NOW + 30_001 }), {}, NOW)), 'UNAUTHENTICATED', 'future');
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(newSigner('admin:mallory'), '/v1/pending'), {}, NOW)), 'UNAUTHENTICATED', 'unknown key');
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(revoked, '/v1/pending'), {}, NOW)), 'UNAUTHENTICATED', 'revoked key');
  // Another key's signature under the admin's key id.
  const mallory = newSigner('admin:mallory');
  const nonce = '11'.repeat(16);
  const sig = toBase64(nodeEd25519.sign(mallory.seed, readSigningMessage({ method: 'GET', audience: INSTALLATION, target: '/v1/pending', timestampMs: NOW, nonce, bodyHash: '' })));
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', `Ledger-Ed25519 keyId=${admin.keyId},aud=${INSTALLATION},ts=${NOW},nonce=${nonce},sig=${sig}`, {}, NOW)), 'UNAUTHENTICATED', 'forged');
  assert.equal(await codeOf(authenticator.authenticate('GET', '/metrics', 'Bearer anything', { allowMetricsToken: true }, NOW)), 'UNAUTHENTICATED', 'no token configured');
  nonces.failing = true;
  assert.equal(await codeOf(authenticator.authenticate('GET', '/v1/pending', header(admin, '/v1/pending'), {}, NOW)), 'UNAVAILABLE', 'the store is down');
  nonces.failing = false;
  assert.equal(await codeOf(api({ keysDown: true }).authenticate('GET', '/v1/pending', header(admin, '/v1/pending'), {}, NOW)), 'UNAVAILABLE', 'the authority state is down');
});
