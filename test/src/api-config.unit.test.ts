import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigSchema, apiBind, apiCaFile, apiEdgeSettings, apiTls, type HomeConfig } from '@agent-ledger/ledger';

// The API's Host allow-list, rate limits and backlog bound come from the
// installation config file's `api` section, each overridden by its
// environment variable; bad values are refused, never silently defaulted.

const base = {
  v: 1,
  origin: 'ledger.test/config',
  eventPartitions: 2,
  freshnessMs: 300_000,
  checkpointEvery: 100,
  checkpointIntervalMs: 1000,
  kafkaBrokers: ['127.0.0.1:9092'],
  pgUrl: 'postgres://postgres@127.0.0.1:5432/x',
  apiPort: 0,
  topicPrefix: 'cfg',
};

function config(api?: unknown): HomeConfig {
  return ConfigSchema.parse(api === undefined ? base : { ...base, api });
}

test('the config file sets hosts, rate limits and the backlog bound', () => {
  const settings = apiEdgeSettings(config({ hosts: ['ledger.internal', 'ledger.example:8443'], rateLimit: { burst: 50, perSecond: 5 }, refusalRecordLimit: { burst: 3, perSecond: 0.5 }, maxBacklogMs: 2000 }), {});
  assert.deepEqual(settings, { allowedHosts: ['ledger.internal', 'ledger.example:8443'], rateLimit: { burst: 50, perSecond: 5 }, refusalRecordLimit: { burst: 3, perSecond: 0.5 }, maxBacklogMs: 2000, readAuth: 'signed' });
});

test('each environment variable, when set, wins over the file; absent both, the defaults', () => {
  const file = config({ hosts: ['ledger.internal'], rateLimit: { burst: 50, perSecond: 5 } });
  const settings = apiEdgeSettings(file, { LEDGER_API_HOSTS: 'a.example,b.example:80', LEDGER_API_RATE_LIMIT: '9/3', LEDGER_API_MAX_BACKLOG_MS: '1500' });
  assert.deepEqual(settings.allowedHosts, ['a.example', 'b.example:80']);
  assert.deepEqual(settings.rateLimit, { burst: 9, perSecond: 3 });
  assert.equal(settings.maxBacklogMs, 1500);
  const defaults = apiEdgeSettings(config(), {});
  assert.deepEqual(defaults.allowedHosts, []);
  assert.deepEqual(defaults.rateLimit, { burst: 200, perSecond: 100 });
  assert.deepEqual(defaults.refusalRecordLimit, { burst: 20, perSecond: 1 });
  assert.equal(defaults.maxBacklogMs, undefined);
});

test('bad values in the file or the environment are refused', () => {
  for (const api of [{ hosts: ['evil.example/path'] }, { hosts: ['a b'] }, { rateLimit: { burst: 0, perSecond: 1 } }, { rateLimit: { burst: 1, perSecond: -1 } }, { rateLimit: { burst: 1 } }, { maxBacklogMs: 5 }, { unknown: true }]) {
    assert.equal(ConfigSchema.safeParse({ ...base, api }).success, false, JSON.stringify(api));
  }
  assert.throws(() => apiEdgeSettings(config(), { LEDGER_API_RATE_LIMIT: 'lots' }), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
  assert.throws(() => apiEdgeSettings(config(), { LEDGER_API_MAX_BACKLOG_MS: '-3' }), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
});

test('reads are signed unless the file says open; the bind address, TLS files and the CA come from the file or the environment', () => {
  assert.equal(apiEdgeSettings(config(), {}).readAuth, 'signed');
  assert.equal(apiEdgeSettings(config({ readAuth: 'open' }), {}).readAuth, 'open');
  assert.equal(ConfigSchema.safeParse({ ...base, api: { readAuth: 'none' } }).success, false);
  assert.equal(apiBind(config(), {}), '127.0.0.1');
  assert.equal(apiBind(config({ bind: '0.0.0.0' }), {}), '0.0.0.0');
  assert.equal(apiBind(config({ bind: '0.0.0.0' }), { LEDGER_API_BIND: '10.0.0.5' }), '10.0.0.5');
  assert.equal(apiTls(config(), {}), undefined);
  assert.deepEqual(apiTls(config({ tls: { certFile: '/c.pem', keyFile: '/k.pem' } }), {}), { certFile: '/c.pem', keyFile: '/k.pem' });
  assert.deepEqual(apiTls(config(), { LEDGER_API_TLS_CERT: '/e.pem', LEDGER_API_TLS_KEY: '/f.pem' }), { certFile: '/e.pem', keyFile: '/f.pem' });
  assert.throws(() => apiTls(config(), { LEDGER_API_TLS_CERT: '/e.pem' }), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
  assert.equal(ConfigSchema.safeParse({ ...base, api: { tls: { certFile: '/c.pem' } } }).success, false);
  // Unreadable certificate or token files are a configuration error at start, never a crash later.
  assert.throws(() => apiEdgeSettings(config({ tls: { certFile: '/nonexistent/c.pem', keyFile: '/nonexistent/k.pem' } }), {}), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
  assert.throws(() => apiEdgeSettings(config({ metricsTokenFile: '/nonexistent/token' }), {}), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION');
  assert.equal(apiCaFile(config({ caFile: '/ca.pem' }), {}), '/ca.pem');
  assert.equal(apiCaFile(config({ caFile: '/ca.pem' }), { LEDGER_API_CA: '/env-ca.pem' }), '/env-ca.pem');
});
