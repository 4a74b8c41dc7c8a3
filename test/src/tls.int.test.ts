import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { LedgerClient } from '@agent-ledger/client';
import { LedgerHome, apiFetch, initHome, type RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { proposal, readAs, start } from './live.js';
import { PrivateCluster } from './private-stack.js';

// TLS from the attacker's side of the wire: the API serves https only from
// certificate files (a plain-text request gets nothing), clients reach it
// with the CA they are given (and refuse it without); Postgres is reached
// through `sslmode=verify-full&sslrootcert=...` in its URL, on a cluster of
// the test's own that accepts TLS connections only.

/** A CA and a server certificate for 127.0.0.1 and localhost, made by openssl now; and a second CA that signed nothing here. */
function certificates(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', '-new', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=agent-ledger test CA');
  openssl('req', '-x509', '-new', ...ec, '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '2', '-subj', '/CN=someone else');
  openssl('req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext');
  return { ca: join(dir, 'ca.pem'), otherCa: join(dir, 'other-ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

describe('TLS for the API and for Postgres', () => {
  let files: ReturnType<typeof certificates>;
  let cluster: PrivateCluster;
  let home: LedgerHome;
  let running: RunningLedger;
  let database: string;

  before(async () => {
    files = certificates(mkdtempSync(join(tmpdir(), 'ledger-tls-')));
    cluster = await PrivateCluster.start({ ssl: { certFile: files.cert, keyFile: files.key } });
    const id = randomBytes(4).toString('hex');
    database = `ledger_tls_${id}`;
    const dir = mkdtempSync(join(tmpdir(), 'ledger-tls-home-'));
    initHome(dir, { origin: `ledger.test/${id}`, eventPartitions: 2, topicPrefix: `t${id}`, apiPort: 0, pgUrl: `${cluster.url(database)}?sslmode=verify-full&sslrootcert=${encodeURIComponent(files.ca)}` });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, api: { tls: { certFile: files.cert, keyFile: files.key }, caFile: files.ca } }));
    home = LedgerHome.open(dir);
    running = await start(home);
    readAs(running, home.key('admin-alice'));
  });
  after(async () => {
    await running?.stop();
    await cluster?.stop();
  });

  test('the API serves https only: a plain-text request fails, a client without the CA refuses it, the SDK and the CLI with the CA work', async () => {
    assert.match(running.apiUrl as string, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(home.apiUrl(), /^https:/);
    const port = new URL(running.apiUrl as string).port;
    // Plain text to the TLS port: no HTTP answer at all.
    await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) }));
    // https without the CA: the certificate is not trusted.
    await assert.rejects(fetch(`https://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) }));
    await assert.rejects(apiFetch(files.otherCa)(`https://127.0.0.1:${port}/healthz`));
    // With the CA: served.
    assert.equal((await apiFetch(files.ca)(`https://127.0.0.1:${port}/healthz`)).status, 200);

    // The SDK over https (its fetch trusts the CA): a proposal decided, the decision read back with a signed read.
    const agent = new LedgerClient({ baseUrl: running.apiUrl as string, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId], fetch: apiFetch(files.ca) });
    const decision = await agent.proposeAndWait(proposal(), 60_000);
    assert.equal(decision.outcome, 'allow');
    // Without the CA the SDK cannot reach it: UNAVAILABLE, not a refusal.
    const blind = new LedgerClient({ baseUrl: running.apiUrl as string, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
    await assert.rejects(blind.propose(proposal()), (err: unknown) => (err as { code?: string }).code === 'UNAVAILABLE');

    // The CLI takes the CA from the installation's config (api.caFile) or LEDGER_API_CA.
    const bin = join(repoRoot, 'services/ledger/dist/src/main.js');
    const cli = (env: Record<string, string>) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(process.execPath, [bin, 'grant', 'list', '--home', home.dir, '--api', running.apiUrl as string, '--json'], { env: { ...process.env, ...env } }, (err, stdout) => resolve({ code: (err as { code?: number } | null)?.code ?? 0, stdout }));
      });
    const listed = await cli({});
    assert.equal(listed.code, 0, listed.stdout);
    assert.ok(Array.isArray((JSON.parse(listed.stdout) as { grants?: unknown }).grants));
    const wrongCa = await cli({ LEDGER_API_CA: files.otherCa });
    assert.equal(wrongCa.code, 2, wrongCa.stdout);
    assert.equal((JSON.parse(wrongCa.stdout) as { error?: { code?: string } }).error?.code, 'UNAVAILABLE');
  });

  test('Postgres over TLS through the URL: every ledger connection is encrypted; plain text and a wrong CA are refused', async () => {
    const url = (query: string): string => `${cluster.url(database)}?${query}`;
    const verified = new pg.Client({ connectionString: url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(files.ca)}`) });
    await verified.connect();
    try {
      const { rows } = await verified.query<{ total: number; encrypted: number; decisions: number }>(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE s.ssl)::int AS encrypted, (SELECT count(*)::int FROM enforcement_records) AS decisions
           FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = $1 AND a.backend_type = 'client backend'`,
        [database],
      );
      const row = rows[0] as { total: number; encrypted: number; decisions: number };
      assert.ok(row.total >= 2, `the ledger's pool and listener are connected (${row.total})`);
      assert.equal(row.encrypted, row.total, 'every connection is TLS');
      assert.ok(row.decisions >= 1, 'the projection was written over TLS');
    } finally {
      await verified.end();
    }
    for (const query of ['sslmode=disable', `sslmode=verify-full&sslrootcert=${encodeURIComponent(files.otherCa)}`]) {
      const client = new pg.Client({ connectionString: url(query), connectionTimeoutMillis: 10_000 });
      client.on('error', () => undefined);
      await assert.rejects(client.connect(), query);
      await client.end().catch(() => undefined);
    }
  });
});
