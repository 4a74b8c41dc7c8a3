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
import { LATEST_RULES_VERSION, evolve, initialState } from '@agent-ledger/gate';
import { RulesScreener } from '@agent-ledger/screen';
import {
  DEFAULT_CONFIRMATION,
  DEFAULT_FATIGUE,
  RELEASED_RULES,
  decide as lifeDecide,
  evolve as lifeEvolve,
  initialState as lifeInitial,
  lifeEntryOf,
  type LifeCommand,
  type LifeState,
  type RulesSpec,
  type Said,
} from '@agent-ledger/rulebook';
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
  /** The decision rules version to write (default: the latest released one). */
  readonly rulesVersion?: number;
}

/** What a demo ledger holds, for the summary printed after it is written. */
export interface DemoSummary {
  readonly entries: number;
  readonly partitions: number;
  readonly byType: Record<string, number>;
  readonly byOutcome: Record<string, number>;
  readonly refusalsByCode: Record<string, number>;
}

/**
 * Synthesizes a realistic, valid ledger: a genesis signed by 2 of 3 root keys,
 * key registrations and a revocation, grants with co-signatures, agents
 * proposing tool calls, classifications, screenings, confirmations, human
 * approvals and denials, timeouts with escalations, decisions, refusals of
 * several codes, rejected intake, and checkpoints; written as a bundle with
 * its trust root. It plays the sequencer (one chain per partition) and the
 * humans; what the gate and the timer sign is what the rulebook's Decider
 * says, as in the live roles.
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
  const released = RELEASED_RULES.get(options.rulesVersion ?? LATEST_RULES_VERSION);
  if (released === undefined) throw new Error(`no released rules version ${String(options.rulesVersion)}`);
  const rules: RulesSpec = released;
  // The proposal-life state of each events partition, as the gate and the timer fold it.
  const lives = new Map<number, LifeState>();
  const lifeOf = (partition: number): LifeState => {
    let life = lives.get(partition);
    if (life === undefined) {
      life = lifeInitial();
      lives.set(partition, life);
    }
    return life;
  };

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
    else lifeEvolve(lifeOf(entry.partition), lifeEntryOf(entry, hash));
    if (type === 'decision.recorded') {
      const outcome = (body as BodyOf<'decision.recorded'>).outcome;
      byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    } else if (type === 'refusal.recorded') {
      const code = (body as BodyOf<'refusal.recorded'>).code;
      refusalsByCode[code] = (refusalsByCode[code] ?? 0) + 1;
    }
    return { entry, hash };
  };
  /** Signs what the rulebook says for a partition, as the gate or the timer; returns the hashes by type. */
  const sayAll = (partition: number, command: LifeCommand, signer: Signer): Map<string, string> => {
    const hashes = new Map<string, string>();
    for (const group of lifeDecide(command, lifeOf(partition)).groups) {
      for (const said of group.statements as Said[]) hashes.set(said.type, say(said.type, said.body as never, signer).hash);
    }
    return hashes;
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
  // The legacy agent makes one call, then another that is sequenced just
  // before its key is revoked: decided after the revocation, it is blocked
  // with KEY_REVOKED from rules version 2 on (nothing after counts).
  proposeAndDecide(pickByName('list-workspace'), legacy);
  const lastCall = propose(pickByName('list-workspace'), legacy);
  say('key.revoked', { keyId: legacy.keyId, reason: 'agent decommissioned' }, alice);
  decideAndAnswer(lastCall, legacy.principal, true);

  function proposeAndDecide(scenario: Scenario, agent: Signer): void {
    decideAndAnswer(propose(scenario, agent), agent.principal, false);
  }

  function propose(scenario: Scenario, agent: Signer): { entry: Entry; hash: string } {
    const agentId = agent.principal;
    return say(
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
  }

  /** The gate's first decision (and, when it leaves the call to a human, the human's answer or the timer's timeout and the final decision). */
  function decideAndAnswer(proposal: { entry: Entry; hash: string }, agentId: string, keyRevoked: boolean): void {
    const p = proposal.hash;
    const partition = proposal.entry.partition;
    const life = lifeOf(partition);
    const first: LifeCommand & { type: 'decide_proposal' } = {
      type: 'decide_proposal',
      proposal: p,
      facts: { gate: gateState, keyRevoked, rules },
      authorityIndex: authority.size,
      nowMs: clock,
      confirmation: DEFAULT_CONFIRMATION,
    };
    const asked = lifeDecide(first, life);
    // As the live gate worker does: the rules screener's signed verdict precedes the decision it shapes.
    const screening = asked.screen === null ? undefined : screener.screenNow({ proposal: asked.screen.proposal.body, proposalHash: p, tier: asked.screen.gated.tier, risk: asked.screen.gated.risk, rules: asked.screen.gated.reasons });
    sayAll(partition, screening === undefined ? first : { ...first, screening }, gate);
    const open = life.confirmations.get(p);
    const request = open?.request;
    if (open === undefined || request === undefined || request === null) return;
    const deadlineMs = request.deadlineMs - clock;
    const roll = random();
    const settle = (): void => {
      const hashes = sayAll(partition, { type: 'settle', proposal: p, rules, keyRevoked, authorityIndex: authority.size }, gate);
      const decision = hashes.get('decision.recorded');
      if (decision !== undefined) sayAll(partition, { type: 'signals', entry: decision, fatigue: DEFAULT_FATIGUE, sent: () => false }, gate);
    };
    if (roll < 0.15) {
      clock += deadlineMs + 5;
      sayAll(partition, { type: 'tick', nowMs: clock }, timer);
      settle();
      return;
    }
    clock += Math.floor(random() * deadlineMs * 0.5);
    const firstApprover = Math.floor(random() * approvers.length);
    const approve = roll < 0.75;
    // Distinct approvers, as many as the request needs (a denial needs one).
    for (let k = 0; k < (approve ? request.approvalsRequired : 1); k++) {
      const approver = approvers[(firstApprover + k) % approvers.length] as Signer;
      const response = say('human.response', { agentId, proposal: p, request: request.hash, answer: approve ? 'approve' : 'deny', assurance: 'self_signed', platformIdentity: null }, approver);
      sayAll(partition, { type: 'signals', entry: response.hash, fatigue: DEFAULT_FATIGUE, sent: () => false }, gate);
    }
    settle();
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
