import { PATTERN_RULES, UNINSPECTABLE_RULE, UNKNOWN_HOST_RULE } from './pattern-rules.js';
import type { Rule } from './rule.js';
import { SIGNAL_RULES, type SignalClause, type SignalField, type SignalFlag, type SignalRule } from './signal-rules.js';

/**
 * The signal-rule table compiled once at load: for each field, the list of
 * regular expressions that ever run on it (so a field value is matched once,
 * its answers kept as a bit mask, and remembered per distinct value), and
 * each rule's clauses as bits over those masks: a proposal's clauses are
 * then an OR of its fields' clause bits, and an alternative a few integer
 * tests. The tables in signal-rules.ts stay the single source; nothing here
 * adds a rule.
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

/**
 * Clause bits. Every field clause and every action-set clause of the signal
 * tables gets one bit; a field value's clause bits say which of those clauses
 * it satisfies (computed once per distinct value, from its matcher mask), so
 * the clauses of a whole proposal are the OR of its fields' clause bits.
 */
const clauseBitsByMatcher: number[][] = FIELDS.map(() => []);
const actionSetClauses: { readonly actions: ReadonlySet<string>; readonly bit: number }[] = [];
let clauseCount = 0;

function nextClauseBit(): number {
  if (clauseCount > 30) throw new RangeError('more than 31 field and action clauses in the signal tables');
  return 1 << clauseCount++;
}

/** The clause bits of a value of `field` whose matcher mask is `mask`. */
export function clauseBits(field: number, mask: number): number {
  const byMatcher = clauseBitsByMatcher[field] as number[];
  let bits = 0;
  for (let i = 0; i < byMatcher.length; i++) if ((mask & (1 << i)) !== 0) bits |= byMatcher[i] as number;
  return bits;
}

/** Every clause bit a value of `field` can have, lowest first. */
export function fieldClauses(field: number): readonly number[] {
  let all = 0;
  for (const bits of clauseBitsByMatcher[field] as number[]) all |= bits;
  const list: number[] = [];
  for (let bit = 1; bit !== 0 && all !== 0; bit <<= 1) {
    if ((all & bit) !== 0) list.push(bit);
    all &= ~bit;
  }
  return list;
}

/** The clause bits of an action type: its field clauses (from `mask`) and the action sets its word form `word` belongs to. */
export function actionClauseBits(word: string, mask: number): number {
  let bits = clauseBits(Field.action, mask);
  for (const { actions, bit } of actionSetClauses) if (actions.has(word)) bits |= bit;
  return bits;
}

/**
 * One alternative of a signal rule (an AND of its clauses) as data: it holds
 * when every clause bit in `need` is set, the flags under `flagMask` equal
 * `flagWant`, and every rule in `fired` has fired.
 */
export interface CompiledAlternative {
  readonly need: number;
  readonly flagMask: number;
  readonly flagWant: number;
  /** Indexes in ALL_RULES of the rules that must have fired. */
  readonly fired: Int32Array;
}

function compileAlternative(alternative: readonly SignalClause[], ruleIndex: number): CompiledAlternative {
  let need = 0;
  let flagMask = 0;
  let flagWant = 0;
  const fired: number[] = [];
  for (const clause of alternative) {
    if ('field' in clause) {
      const bit = nextClauseBit();
      need |= bit;
      for (const name of clause.field) {
        const field = Field[name];
        const at = 31 - Math.clz32(bitOf(field, clause.matches));
        const byMatcher = clauseBitsByMatcher[field] as number[];
        while (byMatcher.length <= at) byMatcher.push(0);
        byMatcher[at] = (byMatcher[at] as number) | bit;
      }
    } else if ('flag' in clause) {
      const bit = Flag[clause.flag];
      if ((flagMask & bit) !== 0 && ((flagWant & bit) !== 0) !== clause.is) throw new Error(`rule ${ALL_RULES[ruleIndex]?.id ?? '?'} asks for flag ${clause.flag} both set and clear`);
      flagMask |= bit;
      if (clause.is) flagWant |= bit;
    } else if ('actionIn' in clause) {
      const bit = nextClauseBit();
      need |= bit;
      actionSetClauses.push({ actions: clause.actionIn, bit });
    } else {
      const index = RULE_INDEX.get(clause.fired);
      if (index === undefined || index >= ruleIndex) throw new Error(`rule ${ALL_RULES[ruleIndex]?.id ?? '?'} depends on ${clause.fired}, which is not earlier in the tables`);
      fired.push(index);
    }
  }
  return { need, flagMask, flagWant, fired: Int32Array.from(fired) };
}

/** A signal rule ready to run: its index in {@link ALL_RULES} and its alternatives. */
export interface CompiledSignalRule {
  readonly rule: SignalRule;
  readonly index: number;
  readonly alternatives: readonly CompiledAlternative[];
}

/** {@link SIGNAL_RULES}, compiled. */
export const COMPILED_SIGNAL_RULES: readonly CompiledSignalRule[] = SIGNAL_RULES.map((rule) => {
  const index = RULE_INDEX.get(rule.id) as number;
  return { rule, index, alternatives: rule.when.map((alternative) => compileAlternative(alternative, index)) };
});

/** True when the alternative holds for a proposal's clause bits and flags, given the rules fired so far. */
export function alternativeHolds(alternative: CompiledAlternative, clauses: number, flags: number, fired: Uint8Array): boolean {
  if ((clauses & alternative.need) !== alternative.need || (flags & alternative.flagMask) !== alternative.flagWant) return false;
  const required = alternative.fired;
  for (let i = 0; i < required.length; i++) if (fired[required[i] as number] !== 1) return false;
  return true;
}
