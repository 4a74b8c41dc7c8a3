import { PATTERN_RULES, UNINSPECTABLE_RULE, UNKNOWN_HOST_RULE } from './pattern-rules.js';
import type { Rule } from './rule.js';
import { SIGNAL_RULES, type SignalClause, type SignalField, type SignalFlag, type SignalRule } from './signal-rules.js';

/**
 * The signal-rule table compiled once at load: for each field, the list of
 * regular expressions that ever run on it (so a field value is matched once,
 * its answers kept as a bit mask, and remembered per distinct value), and
 * each rule's clauses as data over those masks. The tables in
 * signal-rules.ts stay the single source; nothing here adds a rule.
 */

/** Field numbers, in the order of {@link FIELDS}. */
export const Field = { tool: 0, action: 1, target: 2, scope: 3, recipient: 4, environment: 5, argKeys: 6, argValues: 7 } as const satisfies Record<SignalField, number>;
/** Every field, by number. */
export const FIELDS: readonly SignalField[] = ['tool', 'action', 'target', 'scope', 'recipient', 'environment', 'argKeys', 'argValues'];
/** True for fields read in word form, false for those read in normal form (signal-rules.ts, SignalField). */
export const WORD_FORM: readonly boolean[] = [true, true, true, true, false, false, true, false];

/** Flag bits (signal-rules.ts, SignalFlag). */
export const Flag = { recipientIsSelf: 1, targetNamesSelf: 2, namesOtherAgent: 4, crisisMode: 8 } as const satisfies Record<SignalFlag, number>;

const matchers: RegExp[][] = FIELDS.map(() => []);

/** The bit of `pattern` in `field`'s mask, adding it to the field's list if new. */
function bitOf(field: number, pattern: RegExp): number {
  const list = matchers[field] as RegExp[];
  let at = list.indexOf(pattern);
  if (at === -1) at = list.push(pattern) - 1;
  if (at > 30) throw new RangeError(`more than 31 matchers on field ${FIELDS[field]}`);
  return 1 << at;
}

/** Bits of facts proposal-views.ts derives from fields (not rules). */
export const FactBit = {
  /** action: reads as running a command. */
  execAction: bitOf(Field.action, /^(?:shell|bash|sh|zsh|exec|execute|command|cmd|terminal|process|subprocess|code|script|powershell|ssh)\b/),
  /** action: reads as a database statement. */
  sqlAction: bitOf(Field.action, /\b(?:sql|db|database|query|mongo|mongodb|redis)\b/),
  /** target: says self, myself or own. */
  targetSelfWords: bitOf(Field.target, /\b(?:self|myself|own)\b/),
} as const;

/** The mask of `text` for `field`: one bit per matcher that matches. */
export function matchMask(field: number, text: string): number {
  const list = matchers[field] as RegExp[];
  let mask = 0;
  for (let i = 0; i < list.length; i++) if ((list[i] as RegExp).test(text)) mask |= 1 << i;
  return mask;
}

/** Every rule in reporting order: pattern rules, the two extra pattern rules, then signal rules. */
export const ALL_RULES: readonly Rule[] = [...PATTERN_RULES, UNKNOWN_HOST_RULE, UNINSPECTABLE_RULE, ...SIGNAL_RULES];
/** Index of each rule in {@link ALL_RULES}. */
export const RULE_INDEX: ReadonlyMap<string, number> = new Map(ALL_RULES.map((rule, i) => [rule.id, i]));
/** Index of {@link UNKNOWN_HOST_RULE} in {@link ALL_RULES}. */
export const UNKNOWN_HOST_INDEX = PATTERN_RULES.length;
/** Index of {@link UNINSPECTABLE_RULE} in {@link ALL_RULES}. */
export const UNINSPECTABLE_INDEX = PATTERN_RULES.length + 1;

/** What compiled clauses read: the field masks, the flag bits, the action in word form, the rules fired so far. */
export interface ClauseInput {
  readonly masks: Int32Array;
  flags: number;
  action: string;
  readonly fired: Uint8Array;
}

/**
 * A clause as data, evaluated by {@link holds} (one switch, one shape: a
 * predicate per clause would make the call site megamorphic and slow).
 */
export interface CompiledClause {
  /** 0 field, 1 flag, 2 action in a set, 3 an earlier rule fired. */
  readonly kind: 0 | 1 | 2 | 3;
  /** Field clauses: the fields and, for each, the bit of the clause's matcher. */
  readonly fields: Int32Array;
  readonly bits: Int32Array;
  /** Flag clauses: the flag bit and whether it must be set. */
  readonly flag: number;
  readonly expected: boolean;
  /** Action clauses. */
  readonly actions: ReadonlySet<string> | null;
  /** Fired clauses: the rule's index in ALL_RULES. */
  readonly ruleIndex: number;
}

const NO_NUMBERS = new Int32Array(0);

function compileClause(clause: SignalClause, ruleIndex: number): CompiledClause {
  const blank = { fields: NO_NUMBERS, bits: NO_NUMBERS, flag: 0, expected: true, actions: null, ruleIndex: -1 };
  if ('field' in clause) {
    const fields = clause.field.map((name) => Field[name]);
    return { ...blank, kind: 0, fields: Int32Array.from(fields), bits: Int32Array.from(fields, (field) => bitOf(field, clause.matches)) };
  }
  if ('flag' in clause) return { ...blank, kind: 1, flag: Flag[clause.flag], expected: clause.is };
  if ('actionIn' in clause) return { ...blank, kind: 2, actions: clause.actionIn };
  const index = RULE_INDEX.get(clause.fired);
  if (index === undefined || index >= ruleIndex) throw new Error(`rule ${ALL_RULES[ruleIndex]?.id ?? '?'} depends on ${clause.fired}, which is not earlier in the tables`);
  return { ...blank, kind: 3, ruleIndex: index };
}

/** True when the clause holds for `input`. */
export function holds(clause: CompiledClause, input: ClauseInput): boolean {
  switch (clause.kind) {
    case 0: {
      const { fields, bits } = clause;
      for (let i = 0; i < fields.length; i++) if (((input.masks[fields[i] as number] as number) & (bits[i] as number)) !== 0) return true;
      return false;
    }
    case 1:
      return ((input.flags & clause.flag) !== 0) === clause.expected;
    case 2:
      return (clause.actions as ReadonlySet<string>).has(input.action);
    case 3:
      return input.fired[clause.ruleIndex] === 1;
  }
}

/** A signal rule ready to run: its index in {@link ALL_RULES} and its alternatives (each an AND of clauses). */
export interface CompiledSignalRule {
  readonly rule: SignalRule;
  readonly index: number;
  readonly alternatives: readonly (readonly CompiledClause[])[];
}

/** {@link SIGNAL_RULES}, compiled. */
export const COMPILED_SIGNAL_RULES: readonly CompiledSignalRule[] = SIGNAL_RULES.map((rule) => {
  const index = RULE_INDEX.get(rule.id) as number;
  return { rule, index, alternatives: rule.when.map((alternative) => alternative.map((clause) => compileClause(clause, index))) };
});
