import { LedgerClient, installationOf } from '@agent-ledger/client';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { BodyOf, Signer } from '@agent-ledger/core';
import { apiCaFile, type LedgerHome } from '../home.js';
import { apiFetch, readFetch } from '../api-fetch.js';
import { fetchGrantTrail, formatGrantTrail } from '../commands/grants.js';
import { SCENARIOS, prng, pickScenario, type Scenario } from './scenarios.js';

/** Outcome counts of a drive. */
export interface DriveSummary {
  readonly proposals: number;
  readonly outcomes: Record<string, number>;
  readonly codes: Record<string, number>;
  readonly approvals: number;
  readonly denials: number;
  /** Answers refused with STALE_APPROVAL because their request closed first (a deadline that passed, a proposal already settled). */
  readonly lateAnswers: number;
}

/**
 * Submits an approver's answer; false when the API refuses it because the
 * request closed in the meantime (STALE_APPROVAL: its deadline passed, or the
 * proposal was settled by an earlier answer). That race is the ledger doing
 * its job, not a failed drive; any other failure is thrown.
 */
async function answerUnlessClosed(approver: LedgerClient, body: BodyOf<'human.response'>): Promise<boolean> {
  try {
    await approver.submit(approver.sign('human.response', body));
    return true;
  } catch (err) {
    if (err instanceof LedgerError && err.code === ReasonCode.STALE_APPROVAL) return false;
    throw err;
  }
}

/** Reads JSON from the API with `read` (a fetch that signs as an admin). */
async function getJson<T>(read: typeof fetch, url: string): Promise<T> {
  const response = await read(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

/** Polls the grant table until `done` holds for it (the projection follows the log asynchronously). */
async function untilGrants(read: typeof fetch, baseUrl: string, done: (grants: readonly GrantListing[]) => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { grants } = await getJson<{ grants: GrantListing[] }>(read, `${baseUrl}/v1/grants`);
    if (done(grants)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface GrantListing {
  readonly grantId: string;
  readonly status: string;
  readonly reauthorizedAt: number | null;
}

/**
 * Drives a realistic stream of agent proposals through the running ledger
 * with the SDK: an admin writes a grant that a second admin co-signs, the
 * second admin re-authorises it and the first co-signs that, then agents
 * propose; approvers approve or deny some confirmations with signed
 * responses and leave others to time out. Logs the grant's paper trail at
 * the end and returns what the gate decided.
 */
export async function drive(home: LedgerHome, options: { proposals: number; seed?: number; log?: (line: string) => void }): Promise<DriveSummary> {
  const log = options.log ?? (() => undefined);
  const baseUrl = home.apiUrl();
  const gateKey = home.key('gate').keyId;
  const caFetch = apiFetch(apiCaFile(home.config));
  const client = (signer: Signer): LedgerClient => new LedgerClient({ baseUrl, signer, deciderKeys: [gateKey], fetch: caFetch });
  // The demo watches the whole ledger: its reads are signed by an admin's key.
  const read = readFetch(home.key('admin-alice'), apiCaFile(home.config), installationOf(home.genesis()));
  const random = prng(options.seed ?? 3);
  const alice = client(home.key('admin-alice'));
  const bob = client(home.key('admin-bob'));
  const approvers = [client(home.key('approver-dana')), client(home.key('approver-eli'))];

  // Four-eyes grant: alice proposes, bob co-signs the exact proposal hash.
  const pay = SCENARIOS.find((s) => s.name === 'pay-acme-invoice') as Scenario;
  const now = Date.now();
  const grantId = `grant-acme-${now}`;
  const proposed = alice.sign('grant.proposed', {
    grantId, agentId: pay.agent, actionType: pay.actionType, targetResource: pay.targetResource, recipient: pay.recipient, scope: pay.scope,
    notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 30 * 86_400_000).toISOString(), effect: 'allow', tier: pay.tier, parentGrantId: null,
  });
  const submittedGrant = await alice.submit(proposed);
  await bob.submit(bob.sign('grant.cosigned', { grantId, grant: submittedGrant.statementHash }));
  const block = SCENARIOS.find((s) => s.name === 'restart-db-host') as Scenario;
  const blockGrant = alice.sign('grant.proposed', {
    grantId: `grant-block-${now}`, agentId: block.agent, actionType: block.actionType, targetResource: block.targetResource, recipient: block.recipient, scope: block.scope,
    notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 365 * 86_400_000).toISOString(), effect: 'block', tier: block.tier, parentGrantId: null,
  });
  const submittedBlock = await alice.submit(blockGrant);
  await bob.submit(bob.sign('grant.cosigned', { grantId: `grant-block-${now}`, grant: submittedBlock.statementHash }));
  await untilGrants(read, baseUrl, (grants) => grants.filter((g) => g.grantId.endsWith(String(now)) && g.status === 'active').length === 2);
  log('grants written and co-signed (four eyes)');
  // Re-authorisation, four eyes again: bob moves the end of the window, alice co-signs that exact statement.
  const reauthorization = await bob.submit(bob.sign('grant.reauthorized', { grantId, grant: submittedGrant.statementHash, expiresAt: new Date(now + 20 * 86_400_000).toISOString() }));
  await alice.submit(alice.sign('grant.cosigned', { grantId, grant: reauthorization.statementHash }));
  await untilGrants(read, baseUrl, (grants) => grants.some((g) => g.grantId === grantId && g.reauthorizedAt !== null));
  log(`grant ${grantId} re-authorised by admin:bob and co-signed by admin:alice`);

  const outcomes: Record<string, number> = {};
  const codes: Record<string, number> = {};
  let approvals = 0;
  let denials = 0;
  /** Answers the API refused because their request had closed in the meantime (its deadline passed, or the proposal was settled). */
  let lateAnswers = 0;
  const agents = new Map<string, LedgerClient>();
  const agentClient = (principal: string): LedgerClient => {
    let c = agents.get(principal);
    if (c === undefined) {
      c = client(home.key(principal.replace(':', '-')));
      agents.set(principal, c);
    }
    return c;
  };
  const waits: Promise<void>[] = [];
  for (let n = 0; n < options.proposals; n++) {
    // Every scenario once first, so each path (allow, grant, block, confirm) shows up; then a weighted mix.
    const scenario = n < SCENARIOS.length ? (SCENARIOS[n] as Scenario) : pickScenario(random);
    const agent = agentClient(scenario.agent);
    const body: Omit<BodyOf<'proposal.submitted'>, 'agentId'> = {
      tool: scenario.tool, actionType: scenario.actionType, targetResource: scenario.targetResource, recipient: scenario.recipient, scope: scenario.scope,
      args: scenario.args, query: scenario.query, labels: [], channel: 'api',
      context: { environment: scenario.rules.includes('context.production') ? 'production' : 'staging', crisis: false, run: n },
    };
    const { statementHash: proposal } = await agent.propose(body);
    const roll = random();
    waits.push(
      (async () => {
        // Approvers answer some confirmations; the rest time out (denied, never approved).
        const answer = roll < 0.45 ? 'approve' : roll < 0.75 ? 'deny' : null;
        const deadline = Date.now() + 120_000;
        let answered = answer === null;
        for (;;) {
          const response = await read(`${baseUrl}/v1/decisions/${proposal}?waitMs=${answered ? 20_000 : 200}`);
          if (response.status === 200) {
            const decision = await agent.awaitDecision(proposal, 5_000);
            outcomes[decision.outcome] = (outcomes[decision.outcome] ?? 0) + 1;
            if (decision.code !== null) codes[decision.code] = (codes[decision.code] ?? 0) + 1;
            return;
          }
          if (!answered) {
            const { pending } = await getJson<{ pending: { proposalHash: string; requestHash: string; status: string }[] }>(read, `${baseUrl}/v1/pending`);
            const item = pending.find((p) => p.proposalHash === proposal && p.status === 'pending');
            if (item !== undefined) {
              const approver = approvers[Math.floor(random() * approvers.length)] as LedgerClient;
              const approverBody = { agentId: scenario.agent, proposal, request: item.requestHash, answer: answer as 'approve' | 'deny', assurance: 'self_signed' as const, platformIdentity: null };
              const counted = await answerUnlessClosed(approver, approverBody);
              if (counted && scenario.tier === 4 && answer === 'approve') {
                const second = approvers.find((a) => a !== approver) as LedgerClient;
                if (!(await answerUnlessClosed(second, approverBody))) lateAnswers += 1;
              }
              if (!counted) lateAnswers += 1;
              else if (answer === 'approve') approvals += 1;
              else denials += 1;
              answered = true;
            }
          }
          if (Date.now() > deadline) throw new Error(`no decision for ${proposal}`);
        }
      })(),
    );
  }
  await Promise.all(waits);
  log(`paper trail of ${grantId} (ledger grants trail ${grantId}):`);
  for (const line of formatGrantTrail(await fetchGrantTrail(baseUrl, grantId, home.key('admin-alice')))) log(`  ${line}`);
  return { proposals: options.proposals, outcomes, codes, approvals, denials, lateAnswers };
}
