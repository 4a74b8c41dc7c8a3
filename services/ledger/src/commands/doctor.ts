import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { canonicalJson, nodeEd25519, verifyEnvelopeSignatures } from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';
import { kafkaBusFor } from '../kafka-client.js';
import { Exit } from '../cli-error.js';
import { LedgerHome, LOCAL_PRINCIPALS, apiCaFile } from '../home.js';
import { topicNames } from '../topics.js';
import { apiFetch } from '../api-fetch.js';
import { reportFailure, reportSuccess } from './json-output.js';

/** One finding: what was checked, whether it is fine, and what to do when not. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  /** `warn`: works, but not as it should; `fail`: something will not work. */
  readonly level: 'ok' | 'warn' | 'fail';
  readonly detail: string;
  readonly fix?: string;
}

/** How long one probe may take: a dead host answers nothing rather than an error. */
const PROBE_MS = 4000;

const ok = (name: string, detail: string): Check => ({ name, ok: true, level: 'ok', detail });
const fail = (name: string, detail: string, fix: string, level: 'warn' | 'fail' = 'fail'): Check => ({ name, ok: level === 'warn', level, detail, fix });

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${PROBE_MS / 1000} s`)), PROBE_MS).unref())]);
}

/** Whether a TCP connection to `host:port` opens within the probe time. */
function tcpReachable(address: string): Promise<string | undefined> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: PROBE_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('no answer');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** The broker: reachable, and the installation's topics exist. kafkajs logs nothing here: the finding says it. */
export async function probeBroker(home: LedgerHome): Promise<Check> {
  const brokers = home.config.kafkaBrokers.join(',');
  const failures = await Promise.all(home.config.kafkaBrokers.map(tcpReachable));
  if (failures.every((f) => f !== undefined)) {
    return fail('broker', `${brokers}: not reachable (${failures.join(', ')})`, 'start the broker (`bash scripts/kafka.sh start`), or set kafkaBrokers in config.json / LEDGER_KAFKA_BROKERS');
  }
  let bus: LogBus;
  try {
    bus = kafkaBusFor(home, 'ledger-doctor', { logLevel: 'nothing' });
  } catch (err) {
    // The TLS or SASL settings name a file that cannot be read, or are incomplete.
    return fail('broker', `${brokers}: ${(err as Error).message}`, 'fix the kafka section of config.json or the LEDGER_KAFKA_* variables');
  }
  try {
    const ends = await withTimeout(bus.endOffsets(topicNames(home.config.topicPrefix).intake), 'broker');
    return ok('broker', `${brokers} answers; intake has ${ends.size} partitions`);
  } catch (err) {
    return fail('broker', `${brokers} answers, but the topics of ${home.config.topicPrefix} cannot be read (${(err as Error).message})`, 'run `ledger serve` once: it creates the topics', 'warn');
  } finally {
    await bus.close().catch(() => undefined);
  }
}

/** Postgres: reachable, and its clock (the projection's `now()`) against this host's. */
export async function probePostgres(home: LedgerHome): Promise<{ check: Check; skewMs?: number }> {
  const url = new URL(home.config.pgUrl);
  const where = `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  const client = new pg.Client({ connectionString: home.config.pgUrl, connectionTimeoutMillis: PROBE_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const before = Date.now();
    const result = await withTimeout(client.query<{ now: Date }>('SELECT now() AS now'), 'postgres');
    const local = (before + Date.now()) / 2;
    return { check: ok('postgres', `${where} answers`), skewMs: result.rows[0]!.now.getTime() - local };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === '3D000') return { check: fail('postgres', `${where}: the database does not exist yet`, 'run `ledger serve` once: it creates the database and its tables', 'warn') };
    return { check: fail('postgres', `${where}: ${(err as Error).message}`, 'start Postgres (`bash scripts/postgres.sh start`), or set pgUrl in config.json / LEDGER_PG_URL') };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The API: /readyz, and its clock (the HTTP Date header). */
export async function probeApi(home: LedgerHome, baseUrl = home.apiUrl()): Promise<{ check: Check; ready?: Record<string, unknown>; skewMs?: number }> {
  try {
    const before = Date.now();
    const response = await apiFetch(apiCaFile(home.config))(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(PROBE_MS) });
    const body = (await response.json()) as Record<string, unknown>;
    const date = Date.parse(response.headers.get('date') ?? '');
    const skewMs = Number.isFinite(date) ? date + 500 - (before + Date.now()) / 2 : undefined;
    if (response.status !== 200) {
      const error = (body['error'] as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
      return { check: fail('api', `${baseUrl} answers but is not ready: ${error}`, 'see `ledger status`; the roles retry by themselves once the broker and Postgres are back', 'warn'), ready: body, ...(skewMs === undefined ? {} : { skewMs }) };
    }
    return { check: ok('api', `${baseUrl} is ready`), ready: body, ...(skewMs === undefined ? {} : { skewMs }) };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return { check: fail('api', `${baseUrl}: not reachable (${cause})`, 'start the roles: `ledger serve` (all roles) or `ledger serve --target api ...`', 'warn') };
  }
}

/** The installation's files: config, trust root and the genesis it signs, keys present and private. */
export function checkFiles(home: LedgerHome): Check[] {
  const checks: Check[] = [];
  const genesis = home.genesis();
  const signers = verifyEnvelopeSignatures(genesis, canonicalJson(genesis.statement), nodeEd25519);
  const rootSigners = signers.filter((k) => home.trustRoot.rootKeys.includes(k));
  if (rootSigners.length >= home.trustRoot.threshold && genesis.statement.body.origin === home.trustRoot.origin) {
    checks.push(ok('trust root', `origin ${home.trustRoot.origin}; genesis signed by ${rootSigners.length} of ${home.trustRoot.rootKeys.length} root keys (threshold ${home.trustRoot.threshold})`));
  } else {
    checks.push(fail('trust root', `genesis.json is signed by ${rootSigners.length} root keys of trust-root.json (threshold ${home.trustRoot.threshold}), origin ${genesis.statement.body.origin}`, 'trust-root.json and genesis.json come from different installations: restore both from the same `ledger init`'));
  }
  const registered = new Map(genesis.statement.body.keys.map((k) => [k.keyId, k.principal]));
  const keysDir = join(home.dir, 'keys');
  const present = new Set(readdirSync(keysDir).filter((f) => f.endsWith('.key')).map((f) => f.slice(0, -'.key'.length)));
  const missing = LOCAL_PRINCIPALS.filter((p) => !present.has(p.file)).map((p) => p.file);
  const loose: string[] = [];
  const unregistered: string[] = [];
  for (const name of present) {
    if ((statSync(join(keysDir, `${name}.key`)).mode & 0o077) !== 0) loose.push(`${name}.key`);
    try {
      const signer = home.key(name);
      if (!name.startsWith('root-') && registered.get(signer.keyId) !== signer.principal) unregistered.push(`${name}.key`);
    } catch {
      unregistered.push(`${name}.key (unreadable)`);
    }
  }
  checks.push(missing.length === 0 ? ok('keys', `${present.size} key files in ${keysDir}`) : fail('keys', `missing ${missing.join(', ')}`, 'restore them from backup; a lost role key is replaced with `ledger key register` (two admins)', 'warn'));
  if (loose.length > 0) checks.push(fail('key permissions', `readable by others: ${loose.join(', ')}`, `chmod 600 ${keysDir}/*.key`));
  if (unregistered.length > 0) checks.push(fail('key registry', `not in the genesis: ${unregistered.join(', ')}`, 'keys added later are fine if `ledger key list` shows them; otherwise register them with `ledger key register`', 'warn'));
  return checks;
}

/** Clock skew findings: statements outside the freshness window are refused as REPLAY. */
function clockCheck(source: string, skewMs: number | undefined, freshnessMs: number): Check | undefined {
  if (skewMs === undefined) return undefined;
  const seconds = (skewMs / 1000).toFixed(1);
  if (Math.abs(skewMs) > freshnessMs / 2) return fail(`clock vs ${source}`, `this host's clock is ${seconds} s off ${source}'s (freshness window ${freshnessMs / 1000} s)`, 'synchronise the clocks (chrony / systemd-timesyncd): statements outside the window are refused as REPLAY');
  if (Math.abs(skewMs) > 2000) return fail(`clock vs ${source}`, `${seconds} s off ${source}'s`, 'synchronise the clocks (chrony / systemd-timesyncd)', 'warn');
  return ok(`clock vs ${source}`, `within ${Math.max(1, Math.ceil(Math.abs(skewMs) / 1000))} s of ${source}'s`);
}

/** Every check `ledger doctor` runs, in order. */
export async function diagnose(homeDir: string | undefined): Promise<Check[]> {
  const dir = homeDir ?? LedgerHome.defaultDir();
  if (!LedgerHome.exists(dir)) return [fail('installation', `${dir} is not an initialised ledger home`, 'run `ledger init` (or pass --home / set LEDGER_HOME)')];
  let home: LedgerHome;
  try {
    home = LedgerHome.open(dir);
  } catch (err) {
    return [fail('installation', `${dir}: ${(err as Error).message}`, 'fix config.json / trust-root.json, or re-create the installation with `ledger init --force`')];
  }
  const checks: Check[] = [ok('installation', `${home.dir} (origin ${home.config.origin}, topic prefix ${home.config.topicPrefix})`)];
  try {
    checks.push(...checkFiles(home));
  } catch (err) {
    checks.push(fail('files', (err as Error).message, 'restore genesis.json, trust-root.json and keys/ from the same `ledger init`'));
  }
  const [broker, postgres, api] = await Promise.all([probeBroker(home), probePostgres(home), probeApi(home)]);
  checks.push(broker, postgres.check, api.check);
  const freshness = home.config.freshnessMs;
  for (const clock of [clockCheck('Postgres', postgres.skewMs, freshness), clockCheck('the API host', api.skewMs, freshness)]) if (clock !== undefined) checks.push(clock);
  return checks;
}

/** The checks of the services the roles depend on: when only these fail, it is an outage. */
const DEPENDENCIES: ReadonlySet<string> = new Set(['broker', 'postgres', 'api']);

/**
 * The typed failure of a diagnosis whose checks failed: UNAVAILABLE
 * (retryable) when only dependencies (broker, Postgres, API) fail, else
 * BAD_CONFIGURATION: the installation itself needs the fixes.
 */
export function diagnosisFailure(failed: readonly Check[]): OperationalError {
  const code = failed.every((c) => DEPENDENCIES.has(c.name)) ? OperationalCode.UNAVAILABLE : OperationalCode.BAD_CONFIGURATION;
  return new OperationalError(code, `checks failed: ${failed.map((c) => c.name).join(', ')}`);
}

/**
 * `ledger doctor`: what is missing or wrong, and how to fix it. Exit 0 when
 * nothing fails (warnings allowed); otherwise the failure of
 * {@link diagnosisFailure} (exit 2), with `--json`
 * `{"ok":false,"error":{...},"checks":[...]}`.
 */
export async function doctorCommand(options: { home?: string; json?: boolean }): Promise<number> {
  const checks = await diagnose(options.home);
  const failed = checks.filter((c) => c.level === 'fail');
  const lines = checks.flatMap((c) => [`${c.level === 'ok' ? 'ok  ' : c.level === 'warn' ? 'WARN' : 'FAIL'}  ${c.name}: ${c.detail}`, ...(c.fix === undefined ? [] : [`      fix: ${c.fix}`])]);
  if (failed.length > 0) return reportFailure(options.json, [...lines, 'some checks failed: see the fixes above'], diagnosisFailure(failed), { checks });
  reportSuccess(options.json, [...lines, 'nothing blocks this installation'], { checks });
  return Exit.ok;
}
