import type { z } from 'zod';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Hash } from '@agent-ledger/core';
import { Exit } from '../cli-error.js';
import { LedgerHome } from '../home.js';
import { checkApiUrl, getOk } from './http.js';
import { lazyHome, resolveSigner } from './admin.js';
import { reportSuccess } from './json-output.js';
import type { Signer } from '@agent-ledger/core';
import {
  DecisionTrailSchema,
  GrantTrailSchema,
  type DecisionTrailBody,
  type GrantSummaryBody,
  type GrantTrailBody,
} from '../api/trail-schema.js';

/** Options of `ledger grants trail`. */
export interface GrantsTrailOptions {
  readonly home?: string;
  /** Base URL of the API (default: the installation's). */
  readonly api?: string;
  /** A proposal hash: print the grant chain behind its decision instead of a grant's trail. */
  readonly decision?: string;
  readonly json?: boolean;
  /** The principal whose key signs the read (an admin; default: the installation's first admin key). */
  readonly as?: string;
  /** A key file that signs the read instead. */
  readonly signerKey?: string;
}

type GrantEvent = GrantSummaryBody['events'][number];

/** A grant id (untrusted CLI input): what `grant.proposed` allows, 1 to 256 characters. */
function checkGrantId(grantId: string): string {
  if (grantId.length < 1 || grantId.length > 256) throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'a grant id is 1 to 256 characters');
  return grantId;
}

/** A proposal hash (untrusted CLI input). */
function checkProposal(proposal: string): string {
  if (!Hash.safeParse(proposal).success) throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'a decision is named by the 64-hex statement hash of its proposal');
  return proposal;
}

/**
 * GETs one trail route and checks the answer (untrusted) against its schema.
 * A refusal becomes a LedgerError with the server's ReasonCode (404:
 * GRANT_MISSING); an unreachable server, a 5xx or an answer that is not the
 * expected JSON an OperationalError (UNAVAILABLE, INTERNAL).
 */
async function getTrail<S extends z.ZodType>(url: string, schema: S, reader: Signer | undefined): Promise<z.infer<S>> {
  const body = await getOk(url, `GET ${url}`, reader);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OperationalError(OperationalCode.INTERNAL, `${url}: not a trail (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`);
  }
  return parsed.data;
}

/** `GET /v1/grants/:grantId/trail`, checked; read as `reader` (an admin: trails are exports). */
export function fetchGrantTrail(baseUrl: string, grantId: string, reader: Signer | undefined): Promise<GrantTrailBody> {
  return getTrail(`${baseUrl}/v1/grants/${encodeURIComponent(checkGrantId(grantId))}/trail`, GrantTrailSchema, reader);
}

/** `GET /v1/decisions/:proposal/trail`, checked; read as `reader`. */
export function fetchDecisionTrail(baseUrl: string, proposal: string, reader: Signer | undefined): Promise<DecisionTrailBody> {
  return getTrail(`${baseUrl}/v1/decisions/${checkProposal(proposal)}/trail`, DecisionTrailSchema, reader);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Where a write stands while it waits: co-signatures so far, needed, and the deadline. */
function waiting(write: GrantEvent): string {
  return `not in force: ${write.cosignedBy.length} of ${plural(write.cosignersNeeded ?? 1, 'co-signature')}, co-signing closes ${write.cosignDeadline ?? '?'}`;
}

/**
 * One line per event: `#12 proposed by admin:alice`, `#13 co-signed by
 * admin:bob (in force)`, `#14 re-authorised by admin:bob until T`, `#15
 * co-signed re-authorisation #14 by admin:alice (in force)`, `#20 revoked
 * by admin:alice: reason`, `#20 revoked with ancestor g-root by admin:alice: reason`.
 */
export function formatGrantEvent(event: GrantEvent, events: readonly GrantEvent[]): string {
  const at = `#${event.authorityIndex}`;
  switch (event.kind) {
    case 'proposed':
      return `${at} proposed by ${event.principal}${event.tookEffect ? '' : ` (${waiting(event)})`}`;
    case 'reauthorized':
      return `${at} re-authorised by ${event.principal} until ${event.expiresAt ?? '?'}${event.tookEffect ? '' : ` (${waiting(event)})`}`;
    case 'cosigned': {
      const write = events.find((e) => e.statementHash === event.namesHash && (e.kind === 'proposed' || e.kind === 'reauthorized'));
      const what = write?.kind === 'reauthorized' ? ` re-authorisation #${write.authorityIndex}` : '';
      const needed = write?.cosignersNeeded ?? 1;
      const position = write === undefined ? 0 : write.cosignedBy.indexOf(event.principal) + 1;
      const state = event.tookEffect
        ? write?.kind === 'reauthorized'
          ? `in force: ends ${write.expiresAt ?? '?'}`
          : 'in force'
        : `${position} of ${needed}`;
      return `${at} co-signed${what} by ${event.principal} (${state})`;
    }
    case 'revoked':
      return `${at} revoked by ${event.principal}${event.reason === null ? '' : `: ${event.reason}`}`;
    case 'revoked_via_ancestor':
      return `${at} revoked with ancestor ${event.revokedVia ?? '?'} by ${event.principal}${event.reason === null ? '' : `: ${event.reason}`}`;
    default:
      return `${at} ${String(event.kind)} by ${event.principal}`;
  }
}

/** A grant's header (`label id note: ...`) and its events, one per line. */
function formatSummary(summary: GrantSummaryBody, label: string, note = ''): string[] {
  const g = summary.grant;
  const end = g.reauthorizedExpiresAt === null ? g.expiresAt : `${g.reauthorizedExpiresAt} (re-authorised at #${g.reauthorizedAt ?? '?'})`;
  return [
    `${label} ${g.grantId}${note}: ${g.effect} ${g.actionType} for ${g.agentId}, tier ${g.tier}, ${g.status}`,
    `  target ${g.targetResource}  recipient ${g.recipient}  scope ${g.scope}  window ${g.notBefore} .. ${end}`,
    ...summary.events.map((e) => `  ${formatGrantEvent(e, summary.events)}`),
  ];
}

/** The human form of a grant trail: the grant and its events, its parent chain, derived grants, the decisions that cited it. */
export function formatGrantTrail(trail: GrantTrailBody): string[] {
  const lines = formatSummary(trail, 'grant');
  if (trail.parents.length === 0) lines.push('parents: none (a root grant)');
  else for (const parent of trail.parents) lines.push(...formatSummary(parent, 'parent'));
  lines.push(`derived: ${trail.derived.length === 0 ? 'none' : trail.derived.join(', ')}`);
  const { total, byOutcome, records } = trail.decisions;
  const counts = Object.entries(byOutcome)
    .map(([outcome, n]) => `${outcome} ${n}`)
    .join(', ');
  lines.push(`decisions: ${total === 0 ? 'none cited it' : `${total} cited it (${counts})`}`);
  for (const d of records) lines.push(`  p${d.partition}#${d.index} ${d.outcome} proposal ${d.proposalHash.slice(0, 16)} at ${d.sequencedAt}`);
  if (records.length < total) lines.push(`  ... and ${total - records.length} more (--json with the API's ?limit=)`);
  return lines;
}

/** The human form of a decision trail: the decision, then the grant chain behind it. */
export function formatDecisionTrail(trail: DecisionTrailBody): string[] {
  const d = trail.decision;
  const lines = [
    `decision on proposal ${trail.proposal.slice(0, 16)}: ${d.outcome}${d.code === null ? '' : ` ${d.code}`}, tier ${d.tier}, risk ${d.risk}, at p${d.partition}#${d.index} ${d.sequencedAt} (authority index ${d.authorityIndex})`,
  ];
  if (d.grantId === null) {
    lines.push('no grant cited');
    return lines;
  }
  if (trail.chain.length === 0) {
    lines.push(`cited grant ${d.grantId} (entry #${d.grantEntry ?? '?'}), not in the projection`);
    return lines;
  }
  trail.chain.forEach((summary, depth) =>
    lines.push(...(depth === 0 ? formatSummary(summary, 'cited grant', ` (entry #${d.grantEntry ?? '?'})`) : formatSummary(summary, 'parent'))),
  );
  return lines;
}

/**
 * `ledger grants trail GRANT_ID` prints a grant's paper trail: who proposed,
 * co-signed, re-authorised and revoked it (with authority indexes), its
 * parent chain, the grants derived from it and the decisions that cited it.
 * `ledger grants trail --decision PROPOSAL_HASH` prints a decision and the
 * grant chain behind it. `--json` prints the API's answer with `"ok":true`.
 */
export async function grantsTrailCommand(grantId: string | undefined, options: GrantsTrailOptions): Promise<number> {
  if ((grantId === undefined) === (options.decision === undefined)) {
    throw new OperationalError(OperationalCode.BAD_ARGUMENT, 'give a GRANT_ID or --decision PROPOSAL_HASH (one of them)');
  }
  if (grantId !== undefined) checkGrantId(grantId);
  if (options.decision !== undefined) checkProposal(options.decision);
  const home = lazyHome(options.home);
  const baseUrl = checkApiUrl(options.api ?? home().apiUrl());
  // Trails are exports: read with an admin's key (--as PRINCIPAL or --signer-key FILE, else the installation's first admin).
  const reader = resolveSigner(options, home);
  const trail = grantId !== undefined ? await fetchGrantTrail(baseUrl, grantId, reader) : await fetchDecisionTrail(baseUrl, options.decision as string, reader);
  reportSuccess(options.json, 'decision' in trail ? formatDecisionTrail(trail) : formatGrantTrail(trail), { ...trail });
  return Exit.ok;
}
