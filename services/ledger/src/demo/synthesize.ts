import { writeFileSync } from 'node:fs';
import {
  PartitionChain,
  createStatement,
  nodeEd25519,
  partitionOf,
  sequencerNoteSigner,
  signCheckpoint,
  signStatement,
  statementHash,
  toBase64,
  sha256Hex,
  type BodyOf,
  type Ed25519Backend,
  type Envelope,
  type Entry,
  type NoteSigner,
  type Signer,
  type StatementType,
  type TrustRoot,
} from '@agent-ledger/core';
import { formatRefusal, type ReasonCode } from '@agent-ledger/refusals';
import { decide as gateDecide, evolve, initialState } from '@agent-ledger/gate';
import { RulesScreener, applyScreening, isScreened, screeningPolicy, screeningStatement } from '@agent-ledger/screen';
import { BundleFileWriter } from '../bundle-writer.js';
import { newSigner } from '../keys.js';
import { formatTrustRoot } from '../trust-root-file.js';
import { DEMO_AGENTS, pickScenario, prng, type Scenario } from './scenarios.js';

/** Options of {@link synthesizeDemo}. */
export interface DemoOptions {
  /** Number of entries to write (events and authority statements together). */
  readonly events: number;
  readonly out: string;
  readonly trustRootOut: string;
  readonly eventPartitions?: number;
  readonly checkpointEvery?: number;
  readonly origin?: string;
  readonly seed?: number;
  readonly startAt?: Date;
  readonly onProgress?: (entries: number) => void;
}

/** What a demo ledger holds, for the summary printed after it is written. */
export interface DemoSummary {
  readonly entries: number;
  readonly partitions: number;
  readonly byType: Record<string, number>;
  readonly byOutcome: Record<string, number>;
  readonly refusalsByCode: Record<string, number>;
}

// The live gate's deadlines (DEFAULT_DEADLINES_MS): a tier 0-1 call above its channel threshold waits too.
const TIER_DEADLINE_MS = [60_000, 60_000, 60_000, 30_000, 10_000];

/**
 * Synthesizes a realistic, valid ledger: a genesis signed by 2 of 3 root keys,
 * key registrations and a revocation, grants with co-signatures, agents
 * proposing tool calls, classifications, screenings, confirmations, human
 * approvals and denials, timeouts with escalations, decisions, refusals of
 * several codes, rejected intake, and checkpoints; written as a bundle with
 * its trust root. It plays the sequencer: one chain per partition.
 */
export async function synthesizeDemo(options: DemoOptions): Promise<DemoSummary> {
  const ed: Ed25519Backend = nodeEd25519;
  const origin = options.origin ?? 'ledger.example/demo';
  const eventPartitions = options.eventPartitions ?? 4;
  const checkpointEvery = options.checkpointEvery ?? 1000;
  const random = prng(options.seed ?? 7);
  let clock = (options.startAt ?? new Date('2026-11-01T08:00:00.000Z')).getTime();

  const roots = [newSigner('root:1'), newSigner('root:2'), newSigner('root:3')];
  const admins = [newSigner('admin:alice'), newSigner('admin:bob'), newSigner('admin:carol')];
  const approvers = [newSigner('approver:dana'), newSigner('approver:eli')];
  const gate = newSigner('service:gate');
  const timer = newSigner('service:timer');
  const sequencer = newSigner('sequencer:main');
  const agents = new Map<string, Signer>(DEMO_AGENTS.map((a) => [a, newSigner(a)]));
  const legacy = newSigner('agent:legacy-bot');

  const trustRoot: TrustRoot = { v: 1, origin, rootKeys: roots.map((r) => r.keyId), threshold: 2 };
  writeFileSync(options.trustRootOut, formatTrustRoot(trustRoot));

  const chains = Array.from({ length: eventPartitions + 1 }, (_, p) => new PartitionChain(p));
  const writer = new BundleFileWriter(options.out, origin, eventPartitions + 1);
  const noteSigner: NoteSigner = sequencerNoteSigner(origin, sequencer, ed);
  const byType: Record<string, number> = {};
  const byOutcome: Record<string, number> = {};
  const refusalsByCode: Record<string, number> = {};
  let total = 0;
  const authority = chains[0] as PartitionChain;
  // The pure gate decides every proposal, over the authority stream as written so far (as the live gate worker does).
  let gateState = initialState();
  const screener = new RulesScreener();

  const sequence = (envelope: Envelope): Entry => {
    const partition = partitionOf(envelope.statement, eventPartitions);
    const chain = chains[partition] as PartitionChain;
    const entry = chain.append(envelope, new Date(clock + 2), authority.size);
    writer.entry(entry);
    if (chain.size % checkpointEvery === 0) writer.checkpoint(partition, signCheckpoint(chain, origin, noteSigner));
    byType[envelope.statement.type] = (byType[envelope.statement.type] ?? 0) + 1;
    total += 1;
    if (total % 10_000 === 0) options.onProgress?.(total);
    return entry;
  };
  const say = <T extends StatementType>(type: T, body: BodyOf<T>, signer: Signer, extraSigners: readonly Signer[] = []): { entry: Entry; hash: string } => {
    clock += 1 + Math.floor(random() * 40);
    const statement = createStatement(type, body, { principal: signer.principal, keyId: signer.keyId }, new Date(clock));
    const envelope = signStatement(statement, [signer, ...extraSigners], ed);
    const entry = sequence(envelope);
    const hash = statementHash(statement);
    if (entry.partition === 0) gateState = evolve(gateState, { statement, index: entry.index, statementHash: hash, sequencedAt: Date.parse(entry.sequencedAt) });
    return { entry, hash };
  };

  // Authority: genesis (2 of 3 roots), the rest of the keys, grants with co-signatures.
  say(
    'genesis',
    {
      origin,
      eventPartitions,
      freshnessMs: 300_000,
      rootKeys: trustRoot.rootKeys,
      rootThreshold: trustRoot.threshold,
      keys: [
        ...admins.map((k) => ({ keyId: k.keyId, principal: k.principal, roles: ['admin' as const] })),
        { keyId: sequencer.keyId, principal: sequencer.principal, roles: ['sequencer' as const] },
        { keyId: gate.keyId, principal: gate.principal, roles: ['service' as const] },
        { keyId: timer.keyId, principal: timer.principal, roles: ['service' as const] },
      ],
    },
    roots[0] as Signer,
    [roots[2] as Signer],
  );
  const alice = admins[0] as Signer;
  const bob = admins[1] as Signer;
  for (const key of [...approvers, ...agents.values(), legacy]) {
    say('key.registered', { keyId: key.keyId, principal: key.principal, roles: [key.principal.startsWith('agent:') ? 'agent' : 'approver'] }, alice);
  }
  const grants = new Map<string, { grantId: string; entryIndex: number }>();
  const writeGrant = (grantId: string, scenarioName: string, effect: 'allow' | 'block', days: number): void => {
    const scenario = pickByName(scenarioName);
    const proposed = say(
      'grant.proposed',
      {
        grantId,
        agentId: scenario.agent,
        actionType: scenario.actionType,
        targetResource: scenario.targetResource,
        recipient: scenario.recipient,
        scope: scenario.scope,
        notBefore: new Date(clock).toISOString(),
        expiresAt: new Date(clock + days * 86_400_000).toISOString(),
        effect,
        tier: scenario.tier,
        parentGrantId: null,
      },
      alice,
    );
    say('grant.cosigned', { grantId, grant: proposed.hash }, bob);
    grants.set(scenarioName, { grantId, entryIndex: proposed.entry.index });
  };
  writeGrant('grant-acme-invoices', 'pay-acme-invoice', 'allow', 30);
  writeGrant('grant-block-db-restart', 'restart-db-host', 'block', 365);
  // The legacy agent makes one call, then its key is revoked (nothing after counts).
  proposeAndDecide(pickByName('list-workspace'), legacy);
  say('key.revoked', { keyId: legacy.keyId, reason: 'agent decommissioned' }, alice);

  function proposeAndDecide(scenario: Scenario, agent: Signer): void {
    const agentId = agent.principal;
    const proposal = say(
      'proposal.submitted',
      {
        agentId,
        tool: scenario.tool,
        actionType: scenario.actionType,
        targetResource: scenario.targetResource,
        recipient: scenario.recipient,
        scope: scenario.scope,
        args: scenario.args,
        query: scenario.query,
        labels: random() < 0.2 ? ['trusted-by-memory'] : [],
        channel: 'api',
        context: { environment: scenario.rules.includes('context.production') ? 'production' : 'staging', crisis: false },
      },
      agent,
    );
    const p = proposal.hash;
    const body = proposal.entry.envelope.statement.body as BodyOf<'proposal.submitted'>;
    const gated = gateDecide({ now: Date.parse(proposal.entry.sequencedAt), channel: body.channel, context: body.context, proposal: body }, gateState);
    let verdict = gated;
    if (isScreened(gated)) {
      // As the live gate worker does: the rules screener's signed verdict precedes the decision it shapes.
      const screened = screener.screenNow({ proposal: body, proposalHash: p, tier: gated.tier, risk: gated.risk, rules: gated.reasons });
      say('screening.verdict', screeningStatement(screened, agentId, p), gate);
      verdict = applyScreening(gated, screeningPolicy(gated.tier, screened.verdict));
    }
    say('classification.recorded', { agentId, proposal: p, tier: verdict.tier, risk: verdict.risk, rules: verdict.reasons.slice(0, 256).map((r) => r.slice(0, 256)) }, gate);
    const decide = (outcome: 'allow' | 'verify_first' | 'block' | 'deny', code: ReasonCode | null, grant?: { grantId: string | null; grantEntry: number | null }): void => {
      say(
        'decision.recorded',
        { agentId, proposal: p, outcome, code, tier: verdict.tier, risk: verdict.risk, authorityIndex: authority.size, grantId: grant?.grantId ?? null, grantEntry: grant?.grantEntry ?? null },
        gate,
      );
      byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
      if (code !== null && outcome !== 'verify_first') {
        say('refusal.recorded', { agentId, proposal: p, code, refusal: formatRefusal(code, `${scenario.actionType} on ${scenario.targetResource}`) }, gate);
        refusalsByCode[code] = (refusalsByCode[code] ?? 0) + 1;
      }
    };
    decide(verdict.outcome, verdict.code, verdict);
    if (verdict.outcome !== 'verify_first') return;
    const deadlineMs = TIER_DEADLINE_MS[verdict.tier] ?? 30_000;
    const deadline = new Date(clock + deadlineMs).toISOString();
    const approvalsRequired = verdict.tier === 4 ? 2 : 1;
    const request = say('confirmation.requested', { agentId, proposal: p, tier: verdict.tier, deadline, approvalsRequired, channels: ['cli', 'web'] }, gate);
    const roll = random();
    if (roll < 0.15) {
      clock += deadlineMs + 5;
      say('timeout.recorded', { agentId, proposal: p, request: request.hash, deadline }, timer);
      if (verdict.tier >= 3) say('escalation.raised', { agentId, proposal: p, level: verdict.tier === 4 ? 'emergency' : 'admin', reason: 'no answer before the deadline' }, timer);
      decide('deny', 'TIMEOUT');
      return;
    }
    clock += Math.floor(random() * deadlineMs * 0.5);
    const first = Math.floor(random() * approvers.length);
    const approve = roll < 0.75;
    // Distinct approvers, as many as the request needs (a denial needs one).
    for (let k = 0; k < (approve ? approvalsRequired : 1); k++) {
      const approver = approvers[(first + k) % approvers.length] as Signer;
      say('human.response', { agentId, proposal: p, request: request.hash, answer: approve ? 'approve' : 'deny', assurance: 'self_signed', platformIdentity: null }, approver);
    }
    if (approve) decide('allow', null);
    else decide('deny', 'HUMAN_DENIED');
  }

  function pickByName(name: string): Scenario {
    for (let i = 0; i < 1000; i++) {
      const s = pickScenario(() => i / 1000);
      if (s.name === name) return s;
    }
    throw new Error(`no scenario ${name}`);
  }

  try {
    let nextAuthority = 5000;
    while (total < options.events) {
      if (random() < 0.01) {
        const agentId = DEMO_AGENTS[Math.floor(random() * DEMO_AGENTS.length)] as string;
        say('intake.rejected', { agentId, code: random() < 0.5 ? 'INVALID_SIGNATURE' : 'REPLAY', detail: 'refused at intake', input: sha256Hex(`rejected intake record ${clock}`) }, sequencer);
        continue;
      }
      if (total >= nextAuthority) {
        nextAuthority += 5000;
        const extra = newSigner(`approver:oncall-${nextAuthority}`);
        say('key.registered', { keyId: extra.keyId, principal: extra.principal, roles: ['approver'] }, admins[2] as Signer);
        approvers.push(extra);
        continue;
      }
      const scenario = pickScenario(random);
      proposeAndDecide(scenario, agents.get(scenario.agent) as Signer);
    }
    const summaries = chains.map((chain) => {
      if (chain.size > 0 && chain.size % checkpointEvery !== 0) writer.checkpoint(chain.partition, signCheckpoint(chain, origin, noteSigner));
      return { partition: chain.partition, size: chain.size, checkpoints: writer.checkpoints(chain.partition), root: toBase64(chain.root()) };
    });
    await writer.finish(summaries, noteSigner, new Date(clock + 1000));
  } catch (err) {
    writer.abort();
    throw err;
  }
  return { entries: total, partitions: chains.length, byType, byOutcome, refusalsByCode };
}
