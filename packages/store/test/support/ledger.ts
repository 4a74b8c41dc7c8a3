import {
  AUTHORITY_PARTITION,
  PartitionChain,
  createStatement,
  entryHash,
  envelopeHash,
  eventPartitionOf,
  generateSeed,
  headerOf,
  keyIdOf,
  nodeEd25519,
  partitionOf,
  signStatement,
  statementHash,
  type BodyOf,
  type Entry,
  type Envelope,
  type Signer,
  type StatementType,
} from '@agent-ledger/core';
import { formatRefusal, type ReasonCode } from '@agent-ledger/refusals';

/** A fresh Ed25519 signer for a principal. */
export function newSigner(principal: string): Signer {
  const seed = generateSeed();
  return { principal, keyId: keyIdOf(seed, nodeEd25519), seed };
}

/** An entry with its header changed and its hash recomputed: self-consistent, but not the sequencer's. */
export function rehashed(entry: Entry, change: Partial<Omit<Entry, 'hash'>>): Entry {
  const changed = { ...entry, ...change };
  return { ...changed, hash: entryHash(headerOf(changed, envelopeHash(changed.envelope))) };
}

/**
 * A hand-driven ledger: genesis with known keys, then statements signed and
 * sequenced into their partitions by core's PartitionChain, as the sequencer
 * would. Entries are kept per partition in index order.
 */
export class LedgerBuilder {
  readonly origin = 'ledger.test/store';
  readonly roots = [newSigner('root:1'), newSigner('root:2')];
  readonly admin = newSigner('admin:alice');
  readonly admin2 = newSigner('admin:bob');
  readonly sequencer = newSigner('sequencer:main');
  readonly gate = newSigner('service:gate');
  readonly approver = newSigner('approver:dana');
  readonly approver2 = newSigner('approver:erin');
  readonly agents: readonly Signer[];
  readonly eventPartitions: number;
  clock = Date.parse('2026-11-01T08:00:00.000Z');
  readonly #chains: PartitionChain[];
  readonly #entries: Entry[][];

  constructor(options: { eventPartitions?: number; agents?: number; grantPolicy?: BodyOf<'genesis'>['grantPolicy'] } = {}) {
    this.eventPartitions = options.eventPartitions ?? 3;
    this.agents = Array.from({ length: options.agents ?? 4 }, (_, i) => newSigner(`agent:bot-${i}`));
    this.#chains = Array.from({ length: this.eventPartitions + 1 }, (_, p) => new PartitionChain(p));
    this.#entries = this.#chains.map(() => []);
    const keys = [
      { keyId: this.admin.keyId, principal: this.admin.principal, roles: ['admin' as const] },
      { keyId: this.admin2.keyId, principal: this.admin2.principal, roles: ['admin' as const] },
      { keyId: this.sequencer.keyId, principal: this.sequencer.principal, roles: ['sequencer' as const] },
      { keyId: this.gate.keyId, principal: this.gate.principal, roles: ['service' as const] },
      { keyId: this.approver.keyId, principal: this.approver.principal, roles: ['approver' as const] },
      { keyId: this.approver2.keyId, principal: this.approver2.principal, roles: ['approver' as const] },
      ...this.agents.map((a) => ({ keyId: a.keyId, principal: a.principal, roles: ['agent' as const] })),
    ];
    this.say(
      'genesis',
      {
        origin: this.origin,
        eventPartitions: this.eventPartitions,
        freshnessMs: 300_000,
        rootKeys: this.roots.map((r) => r.keyId),
        rootThreshold: 2,
        keys,
        ...(options.grantPolicy === undefined ? {} : { grantPolicy: options.grantPolicy }),
      },
      this.roots[0] as Signer,
      { extraSigners: [this.roots[1] as Signer] },
    );
  }

  /** The agent at position i. */
  agent(i: number): Signer {
    return this.agents[i % this.agents.length] as Signer;
  }

  /** The events partition of an agent. */
  partitionOfAgent(agent: Signer): number {
    return eventPartitionOf(agent.principal, this.eventPartitions);
  }

  /** Entries of one partition so far, in index order. */
  entries(partition: number): Entry[] {
    return [...(this.#entries[partition] ?? [])];
  }

  /** Every partition number, authority first. */
  get partitions(): number[] {
    return this.#chains.map((c) => c.partition);
  }

  /** Total number of entries. */
  get size(): number {
    return this.#entries.reduce((n, e) => n + e.length, 0);
  }

  /** Signs and sequences a statement; returns the entry and the statement hash. */
  say<T extends StatementType>(
    type: T,
    body: BodyOf<T>,
    signer: Signer,
    options: { extraSigners?: readonly Signer[] } = {},
  ): { entry: Entry; hash: string } {
    this.clock += 1000;
    const statement = createStatement(type, body, signer, new Date(this.clock));
    const envelope = signStatement(statement, [signer, ...(options.extraSigners ?? [])], nodeEd25519);
    return { entry: this.append(envelope), hash: statementHash(statement) };
  }

  /** Sequences an already-signed envelope into its partition (a replay, when sent twice). */
  append(envelope: Envelope): Entry {
    const partition = partitionOf(envelope.statement, this.eventPartitions);
    const chain = this.#chains[partition] as PartitionChain;
    const authority = this.#chains[AUTHORITY_PARTITION] as PartitionChain;
    const entry = chain.append(envelope, new Date(this.clock + 1), authority.size);
    (this.#entries[partition] as Entry[]).push(entry);
    return entry;
  }

  propose(agent: Signer, overrides: Partial<BodyOf<'proposal.submitted'>> = {}): { entry: Entry; hash: string } {
    return this.say(
      'proposal.submitted',
      {
        agentId: agent.principal,
        tool: 'payments',
        actionType: 'payment.send',
        targetResource: 'payments/vendors/acme',
        recipient: 'acme-corp',
        scope: 'invoice:2026-11',
        args: { amountUsd: 1200 },
        query: 'pay the invoice',
        labels: [],
        channel: 'api',
        context: {},
        ...overrides,
      },
      agent,
    );
  }

  classify(agent: Signer, proposal: string, tier: number, risk: number): { entry: Entry; hash: string } {
    return this.say('classification.recorded', { agentId: agent.principal, proposal, tier, risk, rules: ['payments.large'] }, this.gate);
  }

  decide(
    agent: Signer,
    proposal: string,
    outcome: BodyOf<'decision.recorded'>['outcome'],
    options: { code?: ReasonCode | null; tier?: number; risk?: number; grantId?: string | null; grantEntry?: number | null } = {},
  ): { entry: Entry; hash: string } {
    return this.say(
      'decision.recorded',
      {
        agentId: agent.principal,
        proposal,
        outcome,
        code: options.code ?? null,
        tier: options.tier ?? 1,
        risk: options.risk ?? 10,
        authorityIndex: this.#chains[AUTHORITY_PARTITION]?.size ?? 0,
        grantId: options.grantId ?? null,
        grantEntry: options.grantEntry ?? null,
      },
      this.gate,
    );
  }

  refuse(agent: Signer, proposal: string, code: ReasonCode, detail: string): { entry: Entry; hash: string } {
    return this.say('refusal.recorded', { agentId: agent.principal, proposal, code, refusal: formatRefusal(code, detail) }, this.gate);
  }

  requestConfirmation(agent: Signer, proposal: string, options: { approvalsRequired?: number; deadline?: string } = {}): { entry: Entry; hash: string } {
    return this.say(
      'confirmation.requested',
      {
        agentId: agent.principal,
        proposal,
        tier: 3,
        deadline: options.deadline ?? new Date(this.clock + 600_000).toISOString(),
        approvalsRequired: options.approvalsRequired ?? 1,
        channels: ['cli'],
      },
      this.gate,
    );
  }

  respond(agent: Signer, proposal: string, request: string, answer: 'approve' | 'deny', approver: Signer = this.approver): { entry: Entry; hash: string } {
    return this.say(
      'human.response',
      { agentId: agent.principal, proposal, request, answer, assurance: 'self_signed', platformIdentity: null },
      approver,
    );
  }

  proposeGrant(grantId: string, agent: Signer, by: Signer = this.admin, overrides: Partial<BodyOf<'grant.proposed'>> = {}): { entry: Entry; hash: string } {
    return this.say(
      'grant.proposed',
      {
        grantId,
        agentId: agent.principal,
        actionType: 'payment.send',
        targetResource: 'payments/vendors/acme',
        recipient: 'acme-corp',
        scope: 'invoice:2026-11',
        notBefore: '2026-11-01T00:00:00.000Z',
        expiresAt: '2026-12-01T00:00:00.000Z',
        effect: 'allow',
        tier: 1,
        parentGrantId: null,
        ...overrides,
      },
      by,
    );
  }

  cosignGrant(grantId: string, grant: string, by: Signer = this.admin2): { entry: Entry; hash: string } {
    return this.say('grant.cosigned', { grantId, grant }, by);
  }

  reauthorizeGrant(grantId: string, proposal: string, expiresAt: string, by: Signer = this.admin2): { entry: Entry; hash: string } {
    return this.say('grant.reauthorized', { grantId, grant: proposal, expiresAt }, by);
  }

  revokeGrant(grantId: string, by: Signer = this.admin, reason = 'no longer needed'): { entry: Entry; hash: string } {
    return this.say('grant.revoked', { grantId, reason }, by);
  }
}
