import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Exit } from '../cli-error.js';
import { LedgerHome, apiCaFile } from '../home.js';
import { readFetch } from '../api-fetch.js';
import { installationOf } from '@agent-ledger/client';
import { resolveSigner } from './admin.js';
import type { Signer } from '@agent-ledger/core';
import { probeApi, probeBroker, probePostgres } from './doctor.js';
import { reportFailure, reportSuccess } from './json-output.js';

/** One ledger partition as `ledger status` reports it. */
interface PartitionStatus {
  readonly partition: number;
  readonly checkpointSize: number | null;
  readonly checkpointAgeSeconds: number | null;
  readonly uncoveredEntries: number | null;
}

/** A metric's samples from a Prometheus text exposition, by label set text (`partition="0"`, or '' when unlabelled). */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) found.set(m[1] ?? '', Number(m[2]));
  return found;
}

async function getJson(read: typeof fetch, url: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await read(url, { signal: AbortSignal.timeout(4000) });
    return { status: response.status, body: (await response.json()) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * `ledger status`: which roles run (as the API's process reports them),
 * whether the broker and Postgres answer, how far behind the ledger is
 * (statements accepted but not yet sequenced, entries not yet under a
 * checkpoint), and the newest checkpoint of every partition. Exit 0 when
 * the broker and Postgres answer and the API is ready; otherwise the failure
 * UNAVAILABLE (exit 2), with `--json` `{"ok":false,"error":{...},...report}`.
 */
export async function statusCommand(options: { home?: string; api?: string; json?: boolean }): Promise<number> {
  const home = LedgerHome.open(options.home);
  const baseUrl = options.api ?? home.apiUrl();
  const [broker, postgres, api] = await Promise.all([probeBroker(home), probePostgres(home), probeApi(home, baseUrl)]);
  // /metrics and the checkpoints are an admin's reads: signed by the installation's first admin key when it has one.
  let admin: Signer | undefined;
  try {
    admin = resolveSigner({}, () => home);
  } catch {
    admin = undefined;
  }
  const read = readFetch(admin, apiCaFile(home.config), installationOf(home.genesis()));
  const health = api.ready === undefined ? undefined : await getJson(read, `${baseUrl}/healthz`);
  const roles = ((health?.body as { detail?: { roles?: unknown } } | undefined)?.detail?.roles ?? null) as string[] | null;
  let metrics = '';
  if (api.ready !== undefined) {
    try {
      const response = await read(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(4000) });
      metrics = response.ok ? await response.text() : '';
    } catch {
      metrics = '';
    }
  }
  const ages = samples(metrics, 'ledger_checkpoint_age_seconds');
  const uncovered = samples(metrics, 'ledger_checkpoint_uncovered_entries');
  const partitions: PartitionStatus[] = [];
  for (let p = 0; p <= home.config.eventPartitions; p++) {
    const latest = api.ready === undefined ? undefined : await getJson(read, `${baseUrl}/v1/checkpoints/latest?partition=${p}`);
    const size = latest?.status === 200 ? (latest.body as { size: number }).size : null;
    partitions.push({ partition: p, checkpointSize: size, checkpointAgeSeconds: ages.get(`partition="${p}"`) ?? null, uncoveredEntries: uncovered.get(`partition="${p}"`) ?? null });
  }
  const unsequenced = samples(metrics, 'ledger_api_pending_statements').get('') ?? null;
  const oldestUnsequenced = samples(metrics, 'ledger_api_oldest_pending_seconds').get('') ?? null;
  const pendingApprovals = samples(metrics, 'ledger_pending_approvals').get('') ?? null;
  const report = {
    home: home.dir,
    origin: home.config.origin,
    broker: { up: broker.level !== 'fail', detail: broker.detail },
    postgres: { up: postgres.check.level !== 'fail', detail: postgres.check.detail },
    api: { url: baseUrl, up: api.ready !== undefined, ready: api.check.ok && api.check.level === 'ok', detail: api.check.detail },
    roles,
    lag: { unsequencedStatements: unsequenced, oldestUnsequencedSeconds: oldestUnsequenced, pendingApprovals },
    partitions,
  };
  const down = [
    ...(report.broker.up ? [] : ['broker']),
    ...(report.postgres.up ? [] : ['postgres']),
    ...(report.api.ready ? [] : [report.api.up ? 'api (not ready)' : 'api']),
  ];
  const mark = (up: boolean): string => (up ? 'up  ' : 'DOWN');
  const lines = [
    `ledger ${report.origin} (${report.home})`,
    `  broker    ${mark(report.broker.up)}  ${report.broker.detail}`,
    `  postgres  ${mark(report.postgres.up)}  ${report.postgres.detail}`,
    `  api       ${mark(report.api.up)}  ${report.api.detail}`,
    `  roles     ${roles === null ? 'unknown (the API does not answer)' : roles.join(', ')}`,
    `  lag       ${unsequenced === null ? 'unknown' : `${unsequenced} statements accepted, not yet sequenced (oldest ${oldestUnsequenced?.toFixed(1) ?? '?'} s)`}; ${pendingApprovals ?? '?'} waiting for a human`,
    '  checkpoints',
    ...partitions.map((p) => `    partition ${p.partition}: ${p.checkpointSize === null ? 'none yet' : `size ${p.checkpointSize}, sealed ${p.checkpointAgeSeconds === null ? '?' : `${p.checkpointAgeSeconds.toFixed(0)} s ago`}`}${p.uncoveredEntries ? `, ${p.uncoveredEntries} entries after it` : ''}`),
  ];
  // Something the roles need is down: an outage (UNAVAILABLE, retryable, exit 2), so scripts and probes can tell.
  if (down.length > 0) return reportFailure(options.json, lines, new OperationalError(OperationalCode.UNAVAILABLE, `not up: ${down.join(', ')}`), report);
  reportSuccess(options.json, lines, report);
  return Exit.ok;
}
