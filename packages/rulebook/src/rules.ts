import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { decide as gateDecide, type DecideCommand, type GateDecision, type GateState } from '@agent-ledger/gate';

/** What a timed-out confirmation escalates to. */
export interface Escalation {
  readonly level: 'notify' | 'admin' | 'emergency';
  readonly reason: string;
}

/**
 * One released version of the decision rules. A decision (and its
 * classification) names the version that made it; `verify-chain` replays it
 * with that version, so a change of rules never makes an old bundle fail.
 */
export interface RulesSpec {
  readonly version: number;
  /** The pure gate's first decision (classifier, grants, precedence, thresholds) under these rules. */
  readonly classify: (command: DecideCommand, state: GateState) => GateDecision;
  /** A proposal whose agent's key is revoked at the decision's authority index is blocked with KEY_REVOKED (version 2). */
  readonly revokedKeyBlocks: boolean;
}

/** The escalation a timeout raises (DESIGN.md section 2.1): medium notifies the user, high an admin, critical an emergency. */
export function escalationFor(tier: number): Escalation {
  if (tier >= 4) return { level: 'emergency', reason: 'no answer before the deadline' };
  if (tier === 3) return { level: 'admin', reason: 'no answer before the deadline' };
  return { level: 'notify', reason: 'the action was denied: nobody confirmed it in time' };
}

/** Version 1: the rules as first released, frozen. */
const V1: RulesSpec = Object.freeze({
  version: 1,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 1 }),
  revokedKeyBlocks: false,
});

/** Version 2: version 1, and a proposal by a key revoked at the cited authority index is blocked (KEY_REVOKED). */
const V2: RulesSpec = Object.freeze({
  version: 2,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 2 }),
  revokedKeyBlocks: true,
});

/** Version 3: version 2, with the gate's version-3 reading of commands, paths and tools (gate rules-version.ts). */
const V3: RulesSpec = Object.freeze({
  version: 3,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 3 }),
  revokedKeyBlocks: true,
});

/** Version 4: version 3, with the gate's version-4 reading (gate rules-version.ts). */
const V4: RulesSpec = Object.freeze({
  version: 4,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 4 }),
  revokedKeyBlocks: true,
});

/** Version 5: version 4, with the gate's version-5 reading (gate rules-version.ts). */
const V5: RulesSpec = Object.freeze({
  version: 5,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 5 }),
  revokedKeyBlocks: true,
});

/** Version 6: version 5, with the gate's version-6 reading (gate rules-version.ts). */
const V6: RulesSpec = Object.freeze({
  version: 6,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 6 }),
  revokedKeyBlocks: true,
});

/** Version 7: version 6, with the gate's version-7 reading (gate rules-version.ts). */
const V7: RulesSpec = Object.freeze({
  version: 7,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 7 }),
  revokedKeyBlocks: true,
});

/** Version 8: version 7, with the gate's version-8 reading (gate rules-version.ts). */
const V8: RulesSpec = Object.freeze({
  version: 8,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 8 }),
  revokedKeyBlocks: true,
});

/** Version 9: version 8, with the gate's version-9 reading (gate rules-version.ts). */
const V9: RulesSpec = Object.freeze({
  version: 9,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 9 }),
  revokedKeyBlocks: true,
});

/** Version 10: version 9, with the gate's version-10 reading (gate rules-version.ts). */
const V10: RulesSpec = Object.freeze({
  version: 10,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 10 }),
  revokedKeyBlocks: true,
});

/** Version 11: version 10, with the gate's version-11 reading (gate rules-version.ts). */
const V11: RulesSpec = Object.freeze({
  version: 11,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 11 }),
  revokedKeyBlocks: true,
});

/** Version 12: version 11, with the gate's version-12 reading (gate rules-version.ts). */
const V12: RulesSpec = Object.freeze({
  version: 12,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 12 }),
  revokedKeyBlocks: true,
});

/** Version 13: version 12, with the gate's version-13 reading (gate rules-version.ts). */
const V13: RulesSpec = Object.freeze({
  version: 13,
  classify: (command: DecideCommand, state: GateState) => gateDecide(command, state, { rulesVersion: 13 }),
  revokedKeyBlocks: true,
});

/** Released rules versions by number. */
export type RulesRegistry = ReadonlyMap<number, RulesSpec>;

/** Every released version; verify-chain keeps them all. */
export const RELEASED_RULES: RulesRegistry = new Map<number, RulesSpec>([
  [1, V1],
  [2, V2],
  [3, V3],
  [4, V4],
  [5, V5],
  [6, V6],
  [7, V7],
  [8, V8],
  [9, V9],
  [10, V10],
  [11, V11],
  [12, V12],
  [13, V13],
]);

/** The version a decision without `rulesVersion` was made with. */
export const DEFAULT_RULES_VERSION = 1;

/** `registry` with `spec` added (or replacing its number): how a new version is released, and how a test tries one. */
export function withRules(spec: RulesSpec, registry: RulesRegistry = RELEASED_RULES): RulesRegistry {
  const next = new Map(registry);
  next.set(spec.version, spec);
  return next;
}

/** The rules a statement names (absent = 1); an unknown version is a POLICY_VIOLATION. */
export function rulesFor(version: number | undefined, registry: RulesRegistry = RELEASED_RULES): RulesSpec {
  const spec = registry.get(version ?? DEFAULT_RULES_VERSION);
  if (spec === undefined) throw new LedgerError(ReasonCode.POLICY_VIOLATION, `decision names rules version ${String(version)}, which this verifier does not know`);
  return spec;
}
