import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, readsEverything, type Reader } from '../read-auth.js';
import type { SqlPool } from '@agent-ledger/store';
import type { OperatorMetrics } from '../operator-metrics.js';
import { APPROVAL_LATENCY_BUCKETS } from '../operator-metrics.js';

/** What the operator pages read. */
export interface DashboardDeps {
  readonly pool: SqlPool;
  readonly metrics: OperatorMetrics;
  readonly origin: string;
  readonly health: () => Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** The authenticated reader of a request: the dashboard is an admin's. */
  readonly readerOf: (req: FastifyRequest) => Reader;
}

/** Minutes the time charts cover. */
const WINDOW_MINUTES = 60;

/** Content-Security-Policy of the operator pages: no script at all, styles from this origin. */
const DASHBOARD_CSP = ["default-src 'none'", "style-src 'self'", "img-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; ');
const HEADERS = { 'content-security-policy': DASHBOARD_CSP, 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' };

/** A fixed palette by name: the same code keeps its colour across charts and reloads. */
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const OUTCOME_COLOURS: Readonly<Record<string, string>> = { allow: '#2ca02c', verify_first: '#ff7f0e', block: '#d62728', deny: '#9467bd' };

function colourOf(name: string): string {
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length] as string;
}

/** Text for HTML and SVG (values from the log are untrusted). */
function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface Stacked {
  readonly minute: number;
  readonly key: string;
  readonly count: number;
}

/**
 * A stacked bar chart of counts per minute over the window, one colour per
 * key, with its legend. Each bar segment carries `data-minute`, `data-key`
 * and `data-count`, so a test reads the picture's data back.
 */
function stackedBars(chart: string, title: string, rows: readonly Stacked[], nowMs: number, colour: (key: string) => string): string {
  const width = 720;
  const height = 180;
  const left = 36;
  const bottom = 20;
  const start = Math.floor(nowMs / 60_000) - WINDOW_MINUTES + 1;
  const perMinute = new Map<number, Stacked[]>();
  for (const row of rows) {
    const list = perMinute.get(row.minute) ?? [];
    list.push(row);
    perMinute.set(row.minute, list);
  }
  const totals = [...perMinute.values()].map((list) => list.reduce((n, r) => n + r.count, 0));
  const max = Math.max(1, ...totals);
  const barWidth = (width - left) / WINDOW_MINUTES;
  const scale = (height - bottom - 10) / max;
  const parts: string[] = [];
  for (let m = 0; m < WINDOW_MINUTES; m++) {
    let y = height - bottom;
    for (const row of (perMinute.get(start + m) ?? []).sort((a, b) => a.key.localeCompare(b.key))) {
      const h = Math.max(1, row.count * scale);
      y -= h;
      parts.push(`<rect x="${(left + m * barWidth + 1).toFixed(1)}" y="${y.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${colour(row.key)}" data-minute="${new Date((start + m) * 60_000).toISOString()}" data-key="${esc(row.key)}" data-count="${row.count}"><title>${esc(row.key)}: ${row.count} at ${new Date((start + m) * 60_000).toISOString().slice(11, 16)}</title></rect>`);
    }
  }
  const axis = [
    `<line x1="${left}" y1="${height - bottom}" x2="${width}" y2="${height - bottom}" stroke="#888"/>`,
    `<text x="${left - 4}" y="16" text-anchor="end" font-size="14">${max}</text>`,
    `<text x="${left - 4}" y="${height - bottom}" text-anchor="end" font-size="14">0</text>`,
    `<text x="${left}" y="${height - 4}" font-size="14">-${WINDOW_MINUTES} min</text>`,
    `<text x="${width}" y="${height - 4}" text-anchor="end" font-size="14">now</text>`,
  ];
  const keys = [...new Set(rows.map((r) => r.key))].sort();
  const legend = keys.length === 0 ? '<p class="empty">none in the last hour</p>' : `<ul class="legend">${keys.map((k) => `<li><span class="swatch" data-colour="${colour(k)}"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${colour(k)}"/></svg></span> ${esc(k)} <b>${rows.filter((r) => r.key === k).reduce((n, r) => n + r.count, 0)}</b></li>`).join('')}</ul>`;
  return `<figure data-chart="${chart}"><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(title)}">${axis.join('')}${parts.join('')}</svg>${legend}</figure>`;
}

/** Horizontal bars: one per row, its length the value against `max`; `data-*` carries the values. */
function horizontalBars(chart: string, title: string, rows: readonly { label: string; value: number; text: string; colour: string; data: Record<string, string | number> }[], max: number): string {
  const width = 720;
  const rowHeight = 24;
  const labelWidth = 150;
  const height = Math.max(1, rows.length) * rowHeight + 4;
  const bars = rows.map((row, i) => {
    const w = max <= 0 ? 0 : Math.max(row.value > 0 ? 2 : 0, ((width - labelWidth - 150) * row.value) / max);
    const data = Object.entries(row.data).map(([k, v]) => ` data-${k}="${esc(String(v))}"`).join('');
    return `<g${data}><text x="0" y="${i * rowHeight + 16}" font-size="15">${esc(row.label)}</text><rect x="${labelWidth}" y="${i * rowHeight + 4}" width="${w.toFixed(1)}" height="${rowHeight - 8}" fill="${row.colour}"/><text x="${(labelWidth + w + 6).toFixed(1)}" y="${i * rowHeight + 16}" font-size="15">${esc(row.text)}</text></g>`;
  });
  const body = rows.length === 0 ? `<text x="0" y="16" font-size="15">nothing yet</text>` : bars.join('');
  return `<figure data-chart="${chart}"><figcaption>${esc(title)}</figcaption><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(title)}">${body}</svg></figure>`;
}

/** The dashboard's data, read at request time. */
async function dashboardData(deps: DashboardDeps, nowMs: number) {
  const since = new Date(nowMs - WINDOW_MINUTES * 60_000);
  const [refusals, decisions, pending, latency, health, fatigue, siem] = await Promise.all([
    deps.pool.query<{ minute: Date; code: string; count: string }>(`SELECT minute, code, count FROM refusal_metrics WHERE minute >= $1 ORDER BY minute, code`, [since]),
    deps.pool.query<{ minute: Date; outcome: string; count: string }>(
      `SELECT date_trunc('minute', sequenced_at) AS minute, outcome, count(*) AS count FROM enforcement_records WHERE sequenced_at >= $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [since],
    ),
    deps.pool.query<{ proposal_hash: string; agent_id: string; tier: number; deadline: Date; requested: Date | null }>(
      `SELECT p.proposal_hash, p.agent_id, p.tier, p.deadline, e.sequenced_at AS requested
         FROM pending_approvals p LEFT JOIN entries_seen e ON e.partition = p.partition AND e.index = p.index
        WHERE p.status = 'pending' AND p.deadline > now() ORDER BY p.deadline LIMIT 20`,
    ),
    deps.metrics.latency.get(),
    deps.health(),
    deps.metrics.fatigue.get(),
    deps.metrics.siemLag(),
  ]);
  return { refusals: refusals.rows, decisions: decisions.rows, pending: pending.rows, latency, health, checkpoints: deps.metrics.checkpointHealth(nowMs), fatigue, siem };
}

function page(title: string, body: string, refreshSeconds?: number): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refreshSeconds === undefined ? '' : `<meta http-equiv="refresh" content="${refreshSeconds}">`}<title>${esc(title)}</title><link rel="stylesheet" href="/dashboard.css"></head><body>${body}</body></html>`;
}

const CSS = `body{font-family:system-ui,sans-serif;margin:1rem;max-width:62rem;color:#111}
h1{font-size:1.5rem;margin:0 0 .25rem}nav a{margin-right:1rem}
.tiles{display:flex;flex-wrap:wrap;gap:.75rem;margin:1rem 0}.tile{border:1px solid #ccc;border-radius:6px;padding:.5rem .75rem;min-width:9rem}
.tile b{display:block;font-size:1.6rem}.tile.bad{border-color:#b00;color:#b00}
figure{margin:1.25rem 0;border:1px solid #ddd;border-radius:6px;padding:.5rem}figcaption{font-weight:600;margin-bottom:.25rem}
svg{width:100%;height:auto;display:block}.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:.25rem 0 0;font-size:.85rem}
.empty{color:#666;font-size:.85rem;margin:.25rem 0 0}.swatch svg{display:inline;width:10px;height:10px}
ul.links li{margin:.4rem 0}
@media (max-width:600px){.tile{min-width:7rem}}`;

/**
 * The operator's pages, served by the API with no script and nothing from
 * elsewhere: `/` (a landing page: what runs here and where to go) and
 * `/dashboard`, server-rendered SVG pictures of the pending queue and its
 * age, decisions and refusals by code per minute over the last hour,
 * approval latency, checkpoint age and chain health per partition, and the
 * SIEM exporter's backlog per partition.
 * The dashboard reloads itself every 10 s when asked (`/dashboard?live=1`).
 */
export function registerDashboardRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  app.get('/dashboard.css', async (_req, reply) => reply.headers(HEADERS).type('text/css; charset=utf-8').send(CSS));
  app.get('/', async (_req, reply) => {
    const body = `<h1>agent-ledger</h1><p>Signed, hash-chained audit ledger and action firewall for AI agents: <b>${esc(deps.origin)}</b>.</p>
<ul class="links"><li><a href="/dashboard">Dashboard</a>: the queue, decisions and refusals, approval latency, checkpoints</li>
<li><a href="/approve">Approve</a>: pending requests, answered with your approver key</li>
<li><a href="/openapi.json">API (OpenAPI 3.1)</a></li><li><a href="/metrics">Prometheus metrics</a></li>
<li><a href="/readyz">Readiness</a> and <a href="/healthz">health</a></li></ul>`;
    return reply.headers(HEADERS).type('text/html; charset=utf-8').send(page('agent-ledger', body));
  });
  app.get('/dashboard', async (req, reply) => {
    if (!readsEverything(deps.readerOf(req))) throw forbidden('the dashboard is read by admins');
    const now = Date.now();
    const data = await dashboardData(deps, now);
    const minuteOf = (d: Date): number => Math.floor(d.getTime() / 60_000);
    const refusalRows = data.refusals.map((r) => ({ minute: minuteOf(r.minute), key: r.code, count: Number(r.count) }));
    const decisionRows = data.decisions.map((r) => ({ minute: minuteOf(r.minute), key: r.outcome, count: Number(r.count) }));
    const oldest = data.pending.reduce((m, p) => Math.max(m, p.requested === null ? 0 : (now - p.requested.getTime()) / 1000), 0);
    const halted = ((data.health.detail['halted'] as unknown[] | undefined) ?? []).length;
    const staleCheckpoints = data.checkpoints.filter((c) => c.entries > c.checkpointSize && (c.ageSeconds ?? Infinity) > 60).length;
    const siemBehind = data.siem.known ? data.siem.partitions.reduce((n, p) => n + p.behind, 0) : undefined;
    const tiles = [
      ['pending', 'waiting for a human', String(data.pending.length), data.pending.length > 0 && oldest > 60],
      ['oldest', 'oldest waits', `${Math.round(oldest)} s`, oldest > 60],
      ['refusals', 'refusals, last hour', String(refusalRows.reduce((n, r) => n + r.count, 0)), false],
      ['chain', 'chain health', halted === 0 ? 'ok' : `${halted} halted`, halted > 0],
      ['checkpoints', 'stale checkpoints', String(staleCheckpoints), staleCheckpoints > 0],
      ['siem', 'SIEM export backlog', siemBehind === undefined ? 'unknown' : siemBehind === 0 ? 'caught up' : `≤ ${siemBehind}`, siemBehind !== 0],
    ] as const;
    const tileHtml = `<div class="tiles">${tiles.map(([id, label, value, bad]) => `<div class="tile${bad ? ' bad' : ''}" data-tile="${id}">${esc(label)}<b>${esc(value)}</b></div>`).join('')}</div>`;
    const queue = horizontalBars(
      'pending',
      'Pending queue: time waited (bar) and time left before the deadline',
      data.pending.map((p) => {
        const waited = p.requested === null ? 0 : Math.max(0, (now - p.requested.getTime()) / 1000);
        const left = Math.max(0, (p.deadline.getTime() - now) / 1000);
        return { label: `${p.agent_id.replace(/^agent:/, '')} t${p.tier}`, value: waited, text: `waited ${Math.round(waited)} s, ${Math.round(left)} s left`, colour: p.tier >= 3 ? '#d62728' : '#1f77b4', data: { proposal: p.proposal_hash, waited: Math.round(waited), tier: p.tier } };
      }),
      Math.max(1, ...data.pending.map((p) => (p.deadline.getTime() - (p.requested?.getTime() ?? now)) / 1000)),
    );
    const buckets = data.latency.values.filter((v) => v.metricName === 'ledger_approval_latency_seconds_bucket');
    const latencyRows: { label: string; value: number; text: string; colour: string; data: Record<string, string | number> }[] = [];
    let previous = new Map<string, number>();
    for (const le of [...APPROVAL_LATENCY_BUCKETS, '+Inf'] as const) {
      const upTo = new Map<string, number>();
      for (const b of buckets) if (String((b.labels as Record<string, unknown>)['le']) === String(le)) upTo.set(String(b.labels['answer']), b.value);
      let inBucket = 0;
      for (const [answer, n] of upTo) inBucket += n - (previous.get(answer) ?? 0);
      previous = upTo;
      latencyRows.push({ label: le === '+Inf' ? `> ${APPROVAL_LATENCY_BUCKETS.at(-1)} s` : `<= ${le} s`, value: inBucket, text: String(inBucket), colour: '#9467bd', data: { le: String(le), count: inBucket } });
    }
    const latency = horizontalBars('latency', 'Approval latency: answers (and timeouts) by time from request to answer', latencyRows, Math.max(1, ...latencyRows.map((r) => r.value)));
    const fatigueCount = (signal: string): number => data.fatigue.values.find((v) => v.labels['signal'] === signal)?.value ?? 0;
    const fatigue = horizontalBars(
      'fatigue',
      'Confirmation fatigue: approvals faster than the operation can be read, and repeated approvals a grant could replace',
      [
        { label: 'rushed approvals', value: fatigueCount('approval.rushed'), text: String(fatigueCount('approval.rushed')), colour: '#d62728', data: { signal: 'approval.rushed', count: fatigueCount('approval.rushed') } },
        { label: 'grant suggestions', value: fatigueCount('grant.suggested'), text: String(fatigueCount('grant.suggested')), colour: '#ff7f0e', data: { signal: 'grant.suggested', count: fatigueCount('grant.suggested') } },
      ],
      Math.max(1, fatigueCount('approval.rushed'), fatigueCount('grant.suggested')),
    );
    const checkpoints = horizontalBars(
      'checkpoints',
      'Checkpoints per partition: age of the newest signed checkpoint (entries after it in brackets)',
      data.checkpoints.map((c) => ({ label: `partition ${c.partition}`, value: c.ageSeconds ?? 0, text: c.ageSeconds === null ? 'no checkpoint yet' : `${Math.round(c.ageSeconds)} s ago, size ${c.checkpointSize} (${c.entries - c.checkpointSize} after)`, colour: c.entries > c.checkpointSize && (c.ageSeconds ?? Infinity) > 60 ? '#d62728' : '#2ca02c', data: { partition: c.partition, size: c.checkpointSize, entries: c.entries, age: c.ageSeconds === null ? '' : Math.round(c.ageSeconds) } })),
      Math.max(60, ...data.checkpoints.map((c) => c.ageSeconds ?? 0)),
    );
    const siem = data.siem.known
      ? horizontalBars(
          'siem',
          'SIEM export backlog per partition: entries the exporter has not consumed yet, at most (from its committed offsets against the log\'s end)',
          data.siem.partitions.map((p) => ({
            label: `partition ${p.partition}`,
            value: p.behind,
            text: p.behind === 0 ? `caught up (offset ${p.end})` : `at most ${p.behind} behind (${p.committed === null ? 'nothing committed' : `at offset ${p.committed}`} of ${p.end})`,
            colour: p.behind === 0 ? '#2ca02c' : '#d62728',
            data: { partition: p.partition, behind: p.behind, committed: p.committed ?? '', end: p.end },
          })),
          Math.max(1, ...data.siem.partitions.map((p) => p.behind)),
        )
      : `<figure data-chart="siem" data-state="unknown"><figcaption>SIEM export backlog per partition</figcaption><svg viewBox="0 0 720 28" role="img" aria-label="SIEM export backlog unknown"><text x="0" y="18" font-size="15">unknown: ${esc(data.siem.reason)}</text></svg></figure>`;
    // Reloading by itself is the operator's choice, one link away and one link to stop (WCAG 2.2.1: a page must not refresh unasked).
    const live = (req.query as Record<string, unknown>)['live'] === '1';
    const reload = live ? 'reloads every 10 s: <a href="/dashboard">stop reloading</a>' : '<a href="/dashboard?live=1">reload every 10 s</a>';
    const body = `<header><h1>agent-ledger dashboard</h1><nav><a href="/">Home</a><a href="/approve">Approve</a><a href="/metrics">Metrics</a></nav></header><main><p>${esc(deps.origin)}, ${new Date(now).toISOString().slice(0, 19)}Z (${reload})</p>${tileHtml}${queue}${stackedBars('decisions', 'Decisions per minute by outcome', decisionRows, now, (k) => OUTCOME_COLOURS[k] ?? colourOf(k))}${stackedBars('refusals', 'Refusals per minute by reason code', refusalRows, now, colourOf)}${latency}${fatigue}${checkpoints}${siem}</main>`;
    return reply.headers(HEADERS).type('text/html; charset=utf-8').send(page('agent-ledger dashboard', body, live ? 10 : undefined));
  });
}
