import { readFileSync, statSync } from 'node:fs';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { EntrySchema, Principal, canonicalJson, createStatement, nodeEd25519, parseStrictJson, statementHash, verifyEnvelopeSignatures, type BodyOf, type Entry, type Envelope, type Signer } from '@agent-ledger/core';
import type { GrantSummaryBody } from '../api/trail-schema.js';
import { fetchGrantTrail } from './grants.js';
import { getJson, getOk } from './http.js';
import {
  apiBase,
  badArgument,
  lazyHome,
  parseDuration,
  parseInstant,
  awaitAdmitted,
  resolveSigner,
  runAdmin,
  signOne,
  submit,
  type AdminOptions,
} from './admin.js';

/** Options of the signing `ledger grant` commands. */
export interface GrantWriteOptions extends AdminOptions {
  /** Wait until the sequencer admitted (or rejected) the statement, and report where and whether the grant is in force. */
  readonly wait?: boolean;
}

/** Options of `ledger grant propose`. */
export interface GrantProposeOptions extends GrantWriteOptions {
  readonly grantId: string;
  readonly agent: string;
  readonly action: string;
  readonly target: string;
  readonly recipient: string;
  readonly scope: string;
  readonly effect: string;
  readonly tier: number;
  readonly notBefore?: string;
  readonly expiresAt?: string;
  readonly for?: string;
  readonly parent?: string;
  /** `PATH=JSON`, repeatable: one argument constraint each. */
  readonly constraint: readonly string[];
  /** The whole constraints value, as JSON text or a file holding it. */
  readonly constraintsJson?: string;
}

/** Largest constraints file read. */
const MAX_CONSTRAINTS_BYTES = 256 * 1024;

/** A grant id (untrusted CLI input): what `grant.proposed` allows. */
function checkGrantId(grantId: string): string {
  if (grantId.length < 1 || grantId.length > 256) throw badArgument('a grant id is 1 to 256 characters');
  return grantId;
}

function checkText(value: string, option: string): string {
  if (value.length < 1 || value.length > 256) throw badArgument(`${option} is 1 to 256 characters`);
  return value;
}

/** JSON text (untrusted CLI input) by the ledger's strict parser; BAD_ARGUMENT otherwise. */
function strictJson(text: string, what: string): unknown {
  try {
    return parseStrictJson(text);
  } catch (err) {
    throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Argument constraints (SPEC.md section 7.2), passed through as JSON:
 * `--constraints-json` gives the whole array (JSON text, or a file that
 * holds it); each `--constraint PATH=JSON` adds the JSON object with `path`
 * set to PATH (`amount={"kind":"range","max":20}`,
 * `currency={"kind":"equals","value":"EUR"}`). The ledger, not the CLI,
 * judges them: a shape it does not know is refused with its code.
 */
export function parseConstraints(constraint: readonly string[], constraintsJson: string | undefined): unknown {
  if (constraintsJson !== undefined && constraint.length > 0) throw badArgument('give --constraint PATH=JSON (repeatable) or --constraints-json, not both');
  if (constraintsJson !== undefined) {
    const trimmed = constraintsJson.trimStart();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) return strictJson(constraintsJson, '--constraints-json');
    let size: number;
    try {
      const stat = statSync(constraintsJson);
      if (!stat.isFile()) throw badArgument(`--constraints-json ${constraintsJson} is not a regular file`);
      size = stat.size;
    } catch (err) {
      if (err instanceof OperationalError) throw err;
      throw new OperationalError(OperationalCode.NOT_FOUND, `--constraints-json: cannot read ${constraintsJson}`, { cause: err });
    }
    if (size > MAX_CONSTRAINTS_BYTES) throw badArgument(`--constraints-json ${constraintsJson} is larger than ${MAX_CONSTRAINTS_BYTES} bytes`);
    return strictJson(readFileSync(constraintsJson, 'utf8'), `--constraints-json ${constraintsJson}`);
  }
  if (constraint.length === 0) return undefined;
  return constraint.map((item) => {
    const eq = item.indexOf('=');
    if (eq <= 0) throw badArgument(`--constraint takes PATH=JSON such as amount={"kind":"range","max":20}, not ${item}`);
    const path = item.slice(0, eq);
    const value = strictJson(item.slice(eq + 1), `--constraint ${path}`);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badArgument(`--constraint ${path} takes a JSON object such as {"kind":"range","max":20}`);
    return { ...(value as Record<string, unknown>), path };
  });
}

/** The grant a `grant propose` writes, from its options (untrusted CLI input). */
export function grantBody(options: GrantProposeOptions, nowMs: number): BodyOf<'grant.proposed'> {
  if (!Principal.safeParse(options.agent).success) throw badArgument(`--agent takes a principal such as agent:billing-bot, not ${options.agent}`);
  if (options.effect !== 'allow' && options.effect !== 'block') throw badArgument(`--effect is allow or block, not ${options.effect}`);
  if (!Number.isInteger(options.tier) || options.tier < 0 || options.tier > 4) throw badArgument('--tier is 0 to 4');
  if ((options.expiresAt === undefined) === (options.for === undefined)) throw badArgument('give --expires-at INSTANT or --for DURATION (one of them)');
  const notBefore = options.notBefore === undefined ? new Date(nowMs).toISOString() : parseInstant(options.notBefore, '--not-before');
  const expiresAt = options.expiresAt !== undefined
    ? parseInstant(options.expiresAt, '--expires-at')
    : new Date(Date.parse(notBefore) + parseDuration(options.for as string, '--for')).toISOString();
  const constraints = parseConstraints(options.constraint, options.constraintsJson);
  const body = {
    grantId: checkGrantId(options.grantId),
    agentId: options.agent,
    actionType: checkText(options.action, '--action'),
    targetResource: checkText(options.target, '--target'),
    recipient: checkText(options.recipient, '--recipient'),
    scope: checkText(options.scope, '--scope'),
    notBefore,
    expiresAt,
    effect: options.effect,
    tier: options.tier,
    parentGrantId: options.parent === undefined ? null : checkGrantId(options.parent),
    ...(constraints === undefined ? {} : { constraints }),
  };
  // Constraints ride along as the ledger defines them; the API judges the whole body.
  return body as BodyOf<'grant.proposed'>;
}

type GrantEvent = GrantSummaryBody['events'][number];

/** Polls the grant's trail until the statement is on the authority stream (at most 30 s: then CLIENT_TIMEOUT). */
async function waitForEvent(baseUrl: string, grantId: string, hash: string, reader: Signer): Promise<GrantEvent> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const trail = await fetchGrantTrail(baseUrl, grantId, reader);
      const event = [...trail.events, ...trail.parents.flatMap((p) => p.events)].find((e) => e.statementHash === hash);
      if (event !== undefined) return event;
    } catch (err) {
      // Not projected yet: the grant's first write may still be on its way.
      const code = (err as { code?: unknown }).code;
      if (code !== 'GRANT_MISSING' && code !== 'NOT_FOUND') throw err;
    }
    if (Date.now() > deadline) throw new OperationalError(OperationalCode.CLIENT_TIMEOUT, `statement ${hash.slice(0, 16)} was not on the authority stream within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Signs, submits, optionally waits; the shared report of every grant write. */
async function writeGrant(
  options: GrantWriteOptions,
  build: (baseUrl: string) => Promise<{ envelope: Envelope; grantId: string; what: string; extra?: Record<string, unknown> }>,
): Promise<number> {
  return runAdmin(options.json, async () => {
    const home = lazyHome(options.home);
    const baseUrl = apiBase(options, home);
    const { envelope, grantId, what, extra } = await build(baseUrl);
    const submitted = await submit(baseUrl, envelope);
    const report: Record<string, unknown> = {
      type: envelope.statement.type,
      grantId,
      by: envelope.statement.author.principal,
      id: submitted.id,
      statementHash: submitted.statementHash,
      status: 'accepted',
      ...extra,
    };
    const human = [`${what} by ${envelope.statement.author.principal}: statement ${submitted.statementHash} accepted`];
    if (options.wait === true) {
      const reader = resolveSigner(options, home);
      const admitted = await awaitAdmitted(baseUrl, submitted, reader);
      // The projection may trail the log by a moment: the grant's own trail says whether the write took effect.
      const event = await waitForEvent(baseUrl, grantId, submitted.statementHash, reader);
      Object.assign(report, { status: 'admitted', authorityIndex: admitted.index, tookEffect: event.tookEffect, cosignedBy: event.cosignedBy });
      human.push(`  admitted on the authority stream at #${admitted.index}${event.kind === 'revoked' || event.kind === 'revoked_via_ancestor' ? '' : event.tookEffect ? ' (in force)' : ' (not in force yet)'}`);
    }
    return { human, report };
  });
}

/** `ledger grant propose`: an admin proposes a grant; it is in force only once other admins co-sign it. */
export function grantProposeCommand(options: GrantProposeOptions): Promise<number> {
  return writeGrant(options, async () => {
    const body = grantBody(options, Date.now());
    const signer = resolveSigner(options, lazyHome(options.home));
    const envelope = signOne(createStatement('grant.proposed', body, signer), signer);
    return {
      envelope,
      grantId: body.grantId,
      what: `grant ${body.grantId} proposed (${body.effect} ${body.actionType} for ${body.agentId}, tier ${body.tier}, ${body.notBefore} .. ${body.expiresAt})`,
      extra: { grant: body },
    };
  });
}

/**
 * The signed statement of a grant write, fetched from the log
 * (`GET /v1/receipts/0/:index`, once checkpointed) and checked: it must
 * hash to the write's statement hash and carry its author's signature. So
 * what a co-signer is shown is exactly what the co-signature names, not the
 * API's projection of it. Undefined while the write is not checkpointed.
 * @throws LedgerError INTEGRITY_FAILURE when the log's statement is not the one the trail names.
 */
async function signedWrite(baseUrl: string, write: GrantEvent, reader: Signer): Promise<BodyOf<'grant.proposed'> | BodyOf<'grant.reauthorized'> | undefined> {
  const { status, body } = await getJson(`${baseUrl}/v1/receipts/0/${write.authorityIndex}`, reader);
  if (status !== 200) return undefined;
  const parsed = EntrySchema.safeParse((body as { entry?: unknown } | null)?.entry);
  if (!parsed.success) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `authority entry #${write.authorityIndex} is not a ledger entry`);
  const statement = (parsed.data as unknown as Entry).envelope.statement;
  const signers = verifyEnvelopeSignatures((parsed.data as unknown as Entry).envelope, canonicalJson(statement), nodeEd25519);
  if (statementHash(statement) !== write.statementHash || !signers.includes(statement.author.keyId) || statement.author.principal !== write.principal) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `authority entry #${write.authorityIndex} is not the signed write ${write.statementHash.slice(0, 16)} the trail names`);
  }
  if (statement.type !== 'grant.proposed' && statement.type !== 'grant.reauthorized') throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `authority entry #${write.authorityIndex} is a ${statement.type}`);
  return statement.body as BodyOf<'grant.proposed'> | BodyOf<'grant.reauthorized'>;
}

/**
 * `ledger grant cosign GRANT_ID`: co-signs the write of a grant that waits
 * for co-signatures (its proposal or a re-authorisation; `--write HASH`
 * names one), by the statement hash the trail gives, after printing what it
 * co-signs.
 */
export function grantCosignCommand(grantId: string, options: GrantWriteOptions & { readonly write?: string }): Promise<number> {
  return writeGrant(options, async (baseUrl) => {
    checkGrantId(grantId);
    if (options.write !== undefined && !/^[0-9a-f]{64}$/.test(options.write)) throw badArgument('--write takes the 64-hex statement hash of a grant write');
    const signer = resolveSigner(options, lazyHome(options.home));
    const trail = await fetchGrantTrail(baseUrl, grantId, signer);
    const writes = trail.events.filter((e) => (e.kind === 'proposed' || e.kind === 'reauthorized') && (options.write === undefined ? !e.tookEffect : e.statementHash === options.write));
    const write = writes.at(-1);
    if (write === undefined) {
      throw new OperationalError(OperationalCode.NOT_FOUND, options.write === undefined ? `nothing of grant ${grantId} waits for a co-signature` : `grant ${grantId} has no write ${options.write.slice(0, 16)}`);
    }
    // Show what is co-signed from the signed statements themselves when the log has sealed them.
    const signed = await signedWrite(baseUrl, write, signer);
    const proposal = write.kind === 'proposed' ? signed : await signedWrite(baseUrl, trail.events.find((e) => e.kind === 'proposed') ?? write, signer);
    const g = proposal !== undefined && 'actionType' in proposal ? proposal : trail.grant;
    const verified = signed !== undefined && proposal !== undefined && 'actionType' in proposal;
    const envelope = signOne(createStatement('grant.cosigned', { grantId, grant: write.statementHash }, signer), signer);
    const until = signed !== undefined && 'grant' in signed ? signed.expiresAt : (write.expiresAt ?? '?');
    const what = write.kind === 'reauthorized' ? `re-authorisation #${write.authorityIndex} (until ${until})` : `proposal #${write.authorityIndex}`;
    const source = verified ? 'checked against the signed statements on the log' : "as the API's projection shows it: the write is not checkpointed yet";
    return {
      envelope,
      grantId,
      what: `grant ${grantId} ${what} co-signed (${g.effect} ${g.actionType} for ${g.agentId}: target ${g.targetResource}, recipient ${g.recipient}, scope ${g.scope}, tier ${g.tier}, by ${write.principal}; ${source})`,
      extra: { write: write.statementHash, writeKind: write.kind, verified, ...(verified ? { signed: g } : {}) },
    };
  });
}

/** `ledger grant revoke GRANT_ID --reason TEXT`: revokes a grant and every grant derived from it. */
export function grantRevokeCommand(grantId: string, options: GrantWriteOptions & { readonly reason: string }): Promise<number> {
  return writeGrant(options, async () => {
    const body = { grantId: checkGrantId(grantId), reason: checkText(options.reason, '--reason') };
    const signer = resolveSigner(options, lazyHome(options.home));
    return { envelope: signOne(createStatement('grant.revoked', body, signer), signer), grantId, what: `grant ${grantId} revoked (${body.reason})` };
  });
}

/** `ledger grant reauthorize GRANT_ID --expires-at|--for`: extends a grant in force; another admin must co-sign it. */
export function grantReauthorizeCommand(grantId: string, options: GrantWriteOptions & { readonly expiresAt?: string; readonly for?: string }): Promise<number> {
  return writeGrant(options, async (baseUrl) => {
    checkGrantId(grantId);
    if ((options.expiresAt === undefined) === (options.for === undefined)) throw badArgument('give --expires-at INSTANT or --for DURATION (one of them)');
    const expiresAt = options.expiresAt !== undefined ? parseInstant(options.expiresAt, '--expires-at') : new Date(Date.now() + parseDuration(options.for as string, '--for')).toISOString();
    const signer = resolveSigner(options, lazyHome(options.home));
    const trail = await fetchGrantTrail(baseUrl, grantId, signer);
    const envelope = signOne(createStatement('grant.reauthorized', { grantId, grant: trail.grant.proposalHash, expiresAt }, signer), signer);
    return { envelope, grantId, what: `grant ${grantId} re-authorised until ${expiresAt} (needs a co-signature)`, extra: { expiresAt } };
  });
}

interface GrantListRow {
  readonly grantId: string;
  readonly agentId: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly effect: string;
  readonly tier: number;
  readonly status: string;
  readonly expiresAt: string;
  readonly reauthorizedExpiresAt: string | null;
  readonly proposedBy: string;
  readonly cosignedBy: string | null;
}

/** `ledger grant list [--agent P] [--status S]`: the grant table as the API's projection holds it. */
export function grantListCommand(options: AdminOptions & { readonly agent?: string; readonly status?: string }): Promise<number> {
  return runAdmin(options.json, async () => {
    if (options.agent !== undefined && !Principal.safeParse(options.agent).success) throw badArgument(`--agent takes a principal, not ${options.agent}`);
    if (options.status !== undefined && !['proposed', 'active', 'revoked'].includes(options.status)) throw badArgument('--status is proposed, active or revoked');
    const baseUrl = apiBase(options, lazyHome(options.home));
    const query = options.agent === undefined ? '' : `?agentId=${encodeURIComponent(options.agent)}`;
    const body = await getOk(`${baseUrl}/v1/grants${query}`, 'GET /v1/grants', resolveSigner(options, lazyHome(options.home)));
    const rows = (body as { grants?: unknown } | null)?.grants;
    if (!Array.isArray(rows)) throw new OperationalError(OperationalCode.INTERNAL, 'GET /v1/grants: the answer holds no grant list');
    const grants = (rows as GrantListRow[]).filter((g) => options.status === undefined || g.status === options.status);
    const human = grants.length === 0
      ? ['no grants']
      : grants.map((g) => `${g.grantId}  ${g.status}  ${g.effect} ${g.actionType} for ${g.agentId}  tier ${g.tier}  target ${g.targetResource}  recipient ${g.recipient}  scope ${g.scope}  until ${g.reauthorizedExpiresAt ?? g.expiresAt}  proposed by ${g.proposedBy}${g.cosignedBy === null ? '' : `, co-signed by ${g.cosignedBy}`}`);
    return { human, report: { grants } };
  });
}
