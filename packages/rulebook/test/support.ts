import type { BodyOf, StatementType } from '@agent-ledger/core';
import { initialState as initialGate } from '@agent-ledger/gate';
import { RulesScreener } from '@agent-ledger/screen';

const SCREENER = new RulesScreener();
import { DEFAULT_CONFIRMATION, RELEASED_RULES, decide, evolve, initialState, type LifeCommand, type LifeEntry, type LifeState, type LifeStatement, type RulesSpec, type Said } from '../src/index.js';

export const T0 = Date.parse('2026-11-01T08:00:00.000Z');
export const V1 = RELEASED_RULES.get(1) as RulesSpec;
export const V2 = RELEASED_RULES.get(2) as RulesSpec;
export const AGENT = 'agent:billing-bot';
export const AGENT_KEY = 'a'.repeat(64);

/** One hand-driven events partition: entries are folded as the sequencer would order them. */
export class Partition {
  readonly life: LifeState = initialState();
  readonly partition: number;
  #index = 0;
  clock = T0;
  #hashes = 0;

  constructor(partition = 1) {
    this.partition = partition;
  }

  add<T extends StatementType>(type: T, body: BodyOf<T>, author = 'service:gate', keyId = 'b'.repeat(64)): LifeEntry {
    this.clock += 10;
    this.#hashes += 1;
    const entry: LifeEntry = {
      statement: { type, body, author: { principal: author, keyId } } as unknown as LifeStatement,
      partition: this.partition,
      index: this.#index++,
      sequencedAtMs: this.clock,
      authorityIndex: 3,
      statementHash: `${this.partition}`.padStart(2, '0') + this.#hashes.toString(16).padStart(62, '0'),
      bytes: 300,
    };
    evolve(this.life, entry);
    return entry;
  }

  propose(args: Record<string, unknown> = { command: 'ls -la' }, agentId = AGENT): LifeEntry {
    return this.add('proposal.submitted', {
      agentId, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args, query: '', labels: [], channel: 'api', context: {},
    }, agentId, AGENT_KEY);
  }

  /** What the rulebook says, flattened. */
  ask(command: LifeCommand): Said[] {
    return decide(command, this.life).groups.flatMap((g) => [...g.statements]);
  }

  /** Decides a proposal as the gate does (no screening needed for these operations) and folds what it says. */
  decideAndFold(proposal: LifeEntry, rules: RulesSpec = V2, keyRevoked = false): Said[] {
    const said = this.decideNow(proposal, rules, keyRevoked);
    for (const s of said) this.add(s.type, s.body as never);
    return said;
  }

  /** What the gate signs for a proposal's first decision (the pre-screen's verdict first when it asks for one), not folded. */
  decideNow(proposal: LifeEntry, rules: RulesSpec = V2, keyRevoked = false): Said[] {
    const command = { type: 'decide_proposal' as const, proposal: proposal.statementHash, facts: { gate: initialGate(), keyRevoked, rules }, authorityIndex: 3, nowMs: this.clock, confirmation: DEFAULT_CONFIRMATION };
    const first = decide(command, this.life);
    const screening = first.screen === null ? undefined : SCREENER.screenNow({ proposal: first.screen.proposal.body, proposalHash: proposal.statementHash, tier: first.screen.gated.tier, risk: first.screen.gated.risk, rules: first.screen.gated.reasons });
    return this.ask(screening === undefined ? command : { ...command, screening });
  }
}
