import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLogUpdate } from 'log-update';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { LedgerClient } from '@agent-ledger/client';
import {
  EntrySchema,
  canonicalJson,
  nodeEd25519,
  statementHash,
  verifyEnvelopeSignatures,
  type BodyOf,
  type Entry,
  type Signer,
} from '@agent-ledger/core';
import { Exit, UsageError } from '../cli-error.js';
import { LedgerHome } from '../home.js';
import { getOk } from './http.js';
import { apiFetch } from '../api-fetch.js';
import { reportFailureJson, reportSuccess } from './json-output.js';

/** Options of `ledger approve`. */
export interface ApproveOptions {
  readonly home?: string;
  /** Approver principal, e.g. `approver:dana` (its key file is `keys/approver-dana.key`). */
  readonly as?: string;
  /** Base URL of the API (default: the installation's). */
  readonly api?: string;
  readonly list?: boolean;
  readonly approve?: string;
  readonly deny?: string;
  /** With `--deny`: why, signed into the response (1 to 256 characters). */
  readonly reason?: string;
  readonly batch?: boolean;
  readonly maxTier?: number;
  readonly json?: boolean;
  /** Session trust with `--approve`: also ask for a short-lived allow grant for the exact operation (e.g. `15m`, at most 1 h). */
  readonly session?: string;
  /** Admin principal whose key proposes the session grant (a second admin must co-sign it). */
  readonly admin?: string;
}

/**
 * The highest tier `--batch` may approve. Tiers 3 (high) and 4 (critical)
 * are answered one at a time, after reading the operation: batch approval
 * fights confirmation fatigue on routine items only.
 */
export const MAX_BATCH_TIER = 2;

/** Longest session trust: a session grant is short-lived by design. */
export const MAX_SESSION_MS = 3_600_000;

/** `90s`, `15m`, `1h` (untrusted CLI input) in ms; longer than {@link MAX_SESSION_MS} is refused. */
export function parseSessionDuration(text: string): number {
  const m = /^([1-9]\d{0,4})(s|m|h)$/.exec(text);
  if (m === null) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `--session takes a duration such as 90s, 15m or 1h, not ${text}`);
  const ms = Number(m[1]) * (m[2] === 's' ? 1_000 : m[2] === 'm' ? 60_000 : 3_600_000);
  if (ms > MAX_SESSION_MS) throw new LedgerError(ReasonCode.POLICY_VIOLATION, `session trust lasts at most 1h, not ${text}`);
  return ms;
}

/**
 * The grant a session trust asks for: an allow grant binding exactly the
 * approved operation's five fields, from `nowMs` for `durationMs`, covering
 * the item's tier. It is only a proposal: it takes effect when a second admin
 * co-signs it (four eyes), by the gate's one grant rule.
 */
export function sessionGrant(item: PendingItem, nowMs: number, durationMs: number): BodyOf<'grant.proposed'> {
  const op = item.operation;
  return {
    grantId: `session-${item.proposalHash.slice(0, 16)}`,
    agentId: op.agentId,
    actionType: op.actionType,
    targetResource: op.targetResource,
    recipient: op.recipient,
    scope: op.scope,
    notBefore: new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + durationMs).toISOString(),
    effect: 'allow',
    tier: item.tier,
    parentGrantId: null,
  };
}

/** One pending confirmation, with the operation as the agent signed it (checked against its hash and signature). */
export interface PendingItem {
  readonly proposalHash: string;
  readonly requestHash: string;
  readonly agentId: string;
  readonly tier: number;
  readonly risk: number | null;
  readonly deadline: string;
  readonly approvalsRequired: number;
  readonly approvedBy: readonly string[];
  readonly operation: BodyOf<'proposal.submitted'>;
}

interface PendingRow {
  readonly proposalHash: string;
  readonly requestHash: string;
  readonly agentId: string;
  readonly tier: number;
  readonly deadline: string;
  readonly approvalsRequired: number;
  readonly approvedBy: string[];
  readonly status: string;
}

/** An entry from the API (untrusted): schema-checked, its single signature verified. */
function checkedEntry(value: unknown, what: string): Entry {
  const parsed = EntrySchema.safeParse(value);
  if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${what}: not a ledger entry`);
  const entry = parsed.data as unknown as Entry;
  const signers = verifyEnvelopeSignatures(entry.envelope, canonicalJson(entry.envelope.statement), nodeEd25519);
  if (signers.length !== 1 || signers[0] !== entry.envelope.statement.author.keyId) {
    throw new LedgerError(ReasonCode.INVALID_SIGNATURE, `${what}: not signed by its author's key`);
  }
  return entry;
}

/**
 * The pending queue, each item with its full operation fetched from the log
 * (`GET /v1/proposals/:hash`) and checked here: the statement's hash must be
 * the proposal hash the answer will name, the agent's signature must verify,
 * and the confirmation request must be signed by a service key of the
 * genesis and name that proposal. What is shown is what is approved.
 */
export async function loadPending(baseUrl: string, serviceKeys: ReadonlySet<string>, reader: Signer): Promise<PendingItem[]> {
  const body = await getOk(`${baseUrl}/v1/pending?limit=1000`, 'GET /v1/pending', reader);
  const rows = (body as { pending?: PendingRow[] }).pending ?? [];
  const items: PendingItem[] = [];
  for (const row of rows) {
    if (row.status !== 'pending') continue;
    const detail = await getOk(`${baseUrl}/v1/proposals/${row.proposalHash}`, `GET /v1/proposals/${row.proposalHash.slice(0, 16)}`, reader);
    const answer = detail as { entry?: unknown; request?: unknown; risk?: number | null };
    const proposal = checkedEntry(answer.entry, 'proposal');
    const statement = proposal.envelope.statement;
    if (statement.type !== 'proposal.submitted' || statementHash(statement) !== row.proposalHash) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `the log's proposal does not hash to ${row.proposalHash.slice(0, 16)}`);
    }
    const request = checkedEntry(answer.request, 'confirmation request');
    const requestStatement = request.envelope.statement;
    if (requestStatement.type !== 'confirmation.requested' || statementHash(requestStatement) !== row.requestHash) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `the confirmation request does not hash to ${row.requestHash.slice(0, 16)}`);
    }
    const requestBody = requestStatement.body as BodyOf<'confirmation.requested'>;
    if (!serviceKeys.has(requestStatement.author.keyId) || requestBody.proposal !== row.proposalHash) {
      throw new LedgerError(ReasonCode.KEY_UNKNOWN, 'the confirmation request is not signed by a service key of this ledger for this proposal');
    }
    items.push({
      proposalHash: row.proposalHash,
      requestHash: row.requestHash,
      agentId: row.agentId,
      tier: requestBody.tier,
      risk: answer.risk ?? null,
      deadline: requestBody.deadline,
      approvalsRequired: requestBody.approvalsRequired,
      approvedBy: row.approvedBy,
      operation: statement.body as BodyOf<'proposal.submitted'>,
    });
  }
  return items;
}

/** "expires in 12s" (or "expired") for a deadline at `nowMs`. */
export function timeLeft(deadline: string, nowMs: number): string {
  const seconds = Math.ceil((Date.parse(deadline) - nowMs) / 1000);
  return seconds > 0 ? `expires in ${seconds}s` : 'expired (denied on timeout)';
}

/** The lines that show one item: header with countdown, then the exact operation. */
function describe(item: PendingItem, nowMs: number): string[] {
  const op = item.operation;
  const approvals = item.approvalsRequired > 1 ? `  approvals ${item.approvedBy.length}/${item.approvalsRequired}${item.approvedBy.length > 0 ? ` (${item.approvedBy.join(', ')})` : ''}` : '';
  return [
    `${item.proposalHash.slice(0, 12)}  tier ${item.tier}  risk ${item.risk ?? '?'}  ${op.agentId}  ${timeLeft(item.deadline, nowMs)}${approvals}`,
    `    tool ${op.tool}  action ${op.actionType}  target ${op.targetResource}  recipient ${op.recipient}  scope ${op.scope}`,
    `    args ${JSON.stringify(op.args)}`,
    `    query ${JSON.stringify(op.query)}`,
  ];
}

function itemJson(item: PendingItem, nowMs: number): Record<string, unknown> {
  const op = item.operation;
  return {
    proposalHash: item.proposalHash,
    requestHash: item.requestHash,
    agent: op.agentId,
    tool: op.tool,
    actionType: op.actionType,
    targetResource: op.targetResource,
    recipient: op.recipient,
    scope: op.scope,
    args: op.args,
    query: op.query,
    tier: item.tier,
    risk: item.risk,
    deadline: item.deadline,
    secondsLeft: Math.max(0, Math.ceil((Date.parse(item.deadline) - nowMs) / 1000)),
    approvalsRequired: item.approvalsRequired,
    approvedBy: item.approvedBy,
  };
}

/** The one item whose proposal hash starts with `prefix` (untrusted CLI input). */
export function findByPrefix(items: readonly PendingItem[], prefix: string): PendingItem {
  if (!/^[0-9a-f]{4,64}$/.test(prefix)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a proposal id is 4 to 64 lowercase hex characters of its hash');
  const matches = items.filter((i) => i.proposalHash.startsWith(prefix));
  if (matches.length === 0) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `no pending proposal starts with ${prefix}`);
  if (matches.length > 1) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${matches.length} pending proposals start with ${prefix}; give more characters`);
  return matches[0] as PendingItem;
}

/** The local approver key: `--as approver:dana`, else the first `approver-*.key` of the installation. */
function approverKey(home: LedgerHome, as: string | undefined): Signer {
  if (as !== undefined) {
    if (!/^approver:[A-Za-z0-9._@-]{1,128}$/.test(as)) throw new UsageError(`--as takes an approver principal such as approver:dana, not ${as}`);
    const signer = home.key(as.replace(':', '-'));
    if (signer.principal !== as) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `the key file for ${as} speaks for ${signer.principal}`);
    return signer;
  }
  const files = readdirSync(join(home.dir, 'keys')).filter((f) => /^approver-.+\.key$/.test(f)).sort();
  const first = files[0];
  if (first === undefined) throw new UsageError(`no approver key in ${join(home.dir, 'keys')}`);
  return home.key(first.slice(0, -'.key'.length));
}

/** The admin key that proposes a session grant: `--admin admin:alice` is `keys/admin-alice.key`. */
function adminKey(home: LedgerHome, principal: string): Signer {
  if (!/^admin:[A-Za-z0-9._@-]{1,128}$/.test(principal)) throw new UsageError(`--admin takes an admin principal such as admin:alice, not ${principal}`);
  const signer = home.key(principal.replace(':', '-'));
  if (signer.principal !== principal) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `the key file for ${principal} speaks for ${signer.principal}`);
  return signer;
}

/** Service keys named by the genesis: who may sign confirmation requests at the start of the log. */
function serviceKeysOf(home: LedgerHome): Set<string> {
  return new Set(home.genesis().statement.body.keys.filter((k) => k.roles.includes('service') || k.roles.includes('gate')).map((k) => k.keyId));
}

/** Lines of the live queue at `nowMs`. */
function queueLines(items: readonly PendingItem[], nowMs: number): string[] {
  const lines = items.length === 0 ? ['nothing is waiting for a human'] : items.flatMap((i) => describe(i, nowMs));
  lines.push('(Ctrl-C to stop; answer with: ledger approve --approve ID | --deny ID)');
  return lines;
}

/**
 * The live countdown's screen on a terminal stream: each frame replaces the
 * previous one in place. Lines longer than the terminal are wrapped at its
 * width (the stream's `columns`, read at every frame) and the erase counts
 * those wrapped rows, so a wrapped line leaves no stale copy behind
 * (log-update). Frames taller than the terminal are clipped to its height.
 */
export function countdownScreen(stream: NodeJS.WriteStream): { draw(items: readonly PendingItem[], nowMs: number): void; done(): void } {
  // A pseudo-terminal whose size was never set (script, some CI runners) reports 0 x 0: read as 80 columns, no height limit.
  const sized = {
    isTTY: stream.isTTY,
    get columns() {
      return stream.columns > 0 ? stream.columns : 80;
    },
    get rows() {
      return stream.rows > 0 ? stream.rows : 10_000;
    },
    write: (chunk: string) => stream.write(chunk),
  } as unknown as NodeJS.WriteStream;
  const update = createLogUpdate(sized, { showCursor: true });
  return {
    draw: (items, nowMs) => update(queueLines(items, nowMs).join('\n')),
    done: () => update.done(),
  };
}

/**
 * Prints the queue with a live countdown while stdout is a terminal
 * (redrawn every second, the queue re-read every two), until the queue is
 * empty or the user interrupts.
 */
async function liveList(baseUrl: string, serviceKeys: ReadonlySet<string>, first: PendingItem[], reader: Signer): Promise<void> {
  let items = first;
  let stop = false;
  const interrupt = (): void => {
    stop = true;
  };
  process.once('SIGINT', interrupt);
  const screen = countdownScreen(process.stdout);
  try {
    for (let tick = 0; !stop; tick++) {
      screen.draw(items, Date.now());
      if (items.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (tick % 2 === 1) items = (await loadPending(baseUrl, serviceKeys, reader)).filter((i) => Date.parse(i.deadline) > Date.now());
    }
  } finally {
    screen.done();
    process.removeListener('SIGINT', interrupt);
  }
}

/**
 * Session trust after an approval. With an admin key, proposes the session
 * grant signed by that admin; it does nothing until a second admin co-signs
 * it. Without one, prints the grant an admin would have to propose. Either
 * way the gate's grant rule alone decides whether it ever authorises a call.
 */
async function requestSession(
  item: PendingItem,
  sessionMs: number,
  proposer: Signer | undefined,
  context: { baseUrl: string; serviceKeys: ReadonlySet<string>; json: boolean },
): Promise<Record<string, unknown>> {
  const grant = sessionGrant(item, Date.now(), sessionMs);
  if (proposer === undefined) {
    if (!context.json) {
      process.stdout.write(`  session trust needs two admins: one proposes this grant, another co-signs it (nothing was written):\n  ${JSON.stringify(grant)}\n`);
    }
    return { status: 'needs_admin', grant };
  }
  const admin = new LedgerClient({ baseUrl: context.baseUrl, signer: proposer, deciderKeys: [...context.serviceKeys], fetch: apiFetch() });
  const proposed = await admin.submit(admin.sign('grant.proposed', grant));
  if (!context.json) {
    process.stdout.write(`  session grant ${grant.grantId} proposed by ${proposer.principal} until ${grant.expiresAt}: statement ${proposed.statementHash}\n  it takes effect only when another admin co-signs it (grant.cosigned naming that statement)\n`);
  }
  return { status: 'proposed', grant, statementHash: proposed.statementHash, proposedBy: proposer.principal };
}

/**
 * `ledger approve`: shows pending confirmations with the exact operation and
 * the time left, and answers them with a `human.response` signed by the
 * local approver key. `--batch --max-tier N` approves every pending item of
 * tier <= N and refuses N >= 3. With `--json`, one object:
 * `{"ok":true,"pending":[...]}` for the list, `{"ok":true,"answered":[...]}`
 * after answering, and a failure while answering is the failure object with
 * `answered`, the responses already on the ledger.
 */
export async function approveCommand(options: ApproveOptions): Promise<number> {
  const actions = [options.list === true, options.approve !== undefined, options.deny !== undefined, options.batch === true].filter(Boolean).length;
  if (actions > 1) throw new UsageError('choose one of --list, --approve ID, --deny ID, --batch');
  if (options.maxTier !== undefined && options.batch !== true) throw new UsageError('--max-tier goes with --batch');
  if (options.session !== undefined && options.approve === undefined) throw new UsageError('--session goes with --approve ID (one item at a time)');
  if (options.admin !== undefined && options.session === undefined) throw new UsageError('--admin goes with --session');
  if (options.reason !== undefined && options.deny === undefined) throw new UsageError('--reason goes with --deny ID');
  if (options.reason !== undefined && (options.reason.length < 1 || options.reason.length > 256)) throw new UsageError('--reason is 1 to 256 characters');
  const sessionMs = options.session === undefined ? undefined : parseSessionDuration(options.session);
  if (options.batch === true) {
    if (options.maxTier === undefined) throw new UsageError('--batch needs --max-tier N (at most 2)');
    if (options.maxTier > MAX_BATCH_TIER) {
      throw new LedgerError(ReasonCode.POLICY_VIOLATION, `batch approval is for tiers 0-${MAX_BATCH_TIER} only; tier 3 and 4 items are answered one at a time`);
    }
  }
  const home = LedgerHome.open(options.home);
  const baseUrl = options.api ?? home.apiUrl();
  const serviceKeys = serviceKeysOf(home);
  // The approver's key signs the reads too: the API shows the queue to approvers only.
  const signer = approverKey(home, options.as);
  const items = await loadPending(baseUrl, serviceKeys, signer);
  const now = Date.now();

  if (options.approve === undefined && options.deny === undefined && options.batch !== true) {
    if (options.json === true) {
      reportSuccess(true, [], { pending: items.map((i) => itemJson(i, now)) });
    } else if (process.stdout.isTTY) {
      await liveList(baseUrl, serviceKeys, items, signer);
    } else {
      const lines = items.length === 0 ? ['nothing is waiting for a human'] : items.flatMap((i) => describe(i, now));
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return Exit.ok;
  }

  const client = new LedgerClient({ baseUrl, signer, deciderKeys: [...serviceKeys], fetch: apiFetch() });
  const verdict: 'approve' | 'deny' = options.deny !== undefined ? 'deny' : 'approve';
  const chosen = options.batch === true
    ? items.filter((i) => i.tier <= (options.maxTier as number) && !i.approvedBy.includes(signer.principal))
    : [findByPrefix(items, (options.approve ?? options.deny) as string)];
  if (sessionMs !== undefined && (chosen[0] as PendingItem).tier > MAX_BATCH_TIER) {
    throw new LedgerError(ReasonCode.POLICY_VIOLATION, `session trust is for tiers 0-${MAX_BATCH_TIER} only; a tier ${(chosen[0] as PendingItem).tier} item is approved one call at a time`);
  }
  const proposer = options.admin === undefined ? undefined : adminKey(home, options.admin);
  const answered: Record<string, unknown>[] = [];
  try {
    for (const item of chosen) {
      if (verdict === 'approve' && item.approvedBy.includes(signer.principal)) {
        throw new LedgerError(ReasonCode.POLICY_VIOLATION, `${signer.principal} already approved ${item.proposalHash.slice(0, 12)}; it needs another approver`);
      }
      if (options.json !== true) process.stdout.write(`${describe(item, Date.now()).join('\n')}\n`);
      const body: BodyOf<'human.response'> = { agentId: item.agentId, proposal: item.proposalHash, request: item.requestHash, answer: verdict, assurance: 'self_signed', platformIdentity: null, ...(options.reason === undefined ? {} : { reason: options.reason }) };
      const submitted = await client.submit(client.sign('human.response', body));
      const record: Record<string, unknown> = { proposalHash: item.proposalHash, requestHash: item.requestHash, tier: item.tier, answer: verdict, ...(options.reason === undefined ? {} : { reason: options.reason }), statementHash: submitted.statementHash, by: signer.principal };
      answered.push(record);
      if (options.json !== true) process.stdout.write(`  ${verdict === 'approve' ? 'approved' : 'denied'} by ${signer.principal}: statement ${submitted.statementHash}\n`);
      if (sessionMs !== undefined) record.session = await requestSession(item, sessionMs, proposer, { baseUrl, serviceKeys, json: options.json === true });
    }
  } catch (err) {
    // Without --json each answer was printed as it was written. With it, the
    // failure object says which answers are already on the ledger.
    if (options.json !== true) throw err;
    return reportFailureJson(err, { answered });
  }
  if (options.json === true) reportSuccess(true, [], { answered });
  else if (chosen.length === 0) process.stdout.write(`nothing pending at tier <= ${options.maxTier ?? MAX_BATCH_TIER}\n`);
  return Exit.ok;
}
