import { z } from 'zod';

/**
 * Argument constraints of a grant (SPEC.md section 7.2, rule 7): a grant for
 * a $19.99 refund does not allow a $19,990 one. Each constraint names an
 * argument path in the proposal's `args` and what its value must be; a call
 * is covered only when every constraint holds. Part of the signed
 * `grant.proposed` body; a derived grant may only narrow them.
 *
 * Pure data and pure functions, shared by the grant fold (delegation) and
 * the gate (matching), so both read one definition.
 */

/** Most constraints one grant carries. */
export const MAX_CONSTRAINTS = 32;

/**
 * Longest string a pattern is matched against; a longer argument meets no
 * pattern (fail closed), so one match costs at most 256 x 4096 steps
 * whatever an agent sends.
 */
export const MAX_PATTERN_SUBJECT = 4096;

/**
 * A path into `args`: names joined by `.`, at most 8 deep; a name of digits
 * also indexes an array. Only own members are read (no prototype lookups).
 */
export const ArgumentPath = z
  .string()
  .max(256)
  .regex(/^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,7}$/, 'expected names joined by dots, at most 8 deep');

/**
 * A string pattern of the safe pattern language: `*` matches any run of
 * characters (none included), `?` exactly one character, every other
 * character itself. No classes, groups, alternation or unbounded
 * backtracking: a match costs at most |pattern| x |value| steps, and values
 * longer than {@link MAX_PATTERN_SUBJECT} never match.
 */
export const SafePattern = z.string().min(1).max(256);

const Scalar = z.union([z.string().max(4096), z.number(), z.boolean(), z.null()]);

/** One constraint on one argument path. */
export const ArgumentConstraintSchema = z.discriminatedUnion('kind', [
  /** A number with min <= value <= max (each bound optional, at least one given). */
  z.strictObject({ kind: z.literal('range'), path: ArgumentPath, min: z.number().optional(), max: z.number().optional() }),
  /** Exactly this JSON scalar. */
  z.strictObject({ kind: z.literal('equals'), path: ArgumentPath, value: Scalar }),
  /** A string matching a {@link SafePattern}. */
  z.strictObject({ kind: z.literal('pattern'), path: ArgumentPath, pattern: SafePattern }),
]);

/** A parsed argument constraint. */
export type ArgumentConstraint = z.infer<typeof ArgumentConstraintSchema>;

/** The constraints of a grant, as its body carries them. */
export const ArgumentConstraintsSchema = z.array(ArgumentConstraintSchema).min(1).max(MAX_CONSTRAINTS);

/** Why a set of constraints is not well formed, or null when it is (a range needs a bound, min <= max). */
export function constraintsProblem(constraints: readonly ArgumentConstraint[]): string | null {
  for (const c of constraints) {
    if (c.kind !== 'range') continue;
    if (c.min === undefined && c.max === undefined) return `range on ${c.path} names no bound`;
    if (c.min !== undefined && c.max !== undefined && c.min > c.max) return `range on ${c.path} is empty (min > max)`;
  }
  return null;
}

const MISSING: unique symbol = Symbol('missing');

/** The value at `path` in `args`, own members only; MISSING when any step is absent. */
function valueAt(args: unknown, path: string): unknown {
  let value: unknown = args;
  for (const name of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return MISSING;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/** True when `value` matches a {@link SafePattern} (iterative, with one backtrack point for the last `*`). */
export function matchesPattern(pattern: string, value: string): boolean {
  let p = 0;
  let v = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = v;
    } else if (c !== undefined && (c === '?' || c === value[v])) {
      p++;
      v++;
    } else if (star >= 0) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** True when one constraint holds for `args` (a missing argument never satisfies one: fail closed). */
export function satisfies(constraint: ArgumentConstraint, args: unknown): boolean {
  const value = valueAt(args, constraint.path);
  if (value === MISSING) return false;
  switch (constraint.kind) {
    case 'range':
      return typeof value === 'number' && Number.isFinite(value) && (constraint.min === undefined || value >= constraint.min) && (constraint.max === undefined || value <= constraint.max);
    case 'equals':
      return value === constraint.value;
    case 'pattern':
      return typeof value === 'string' && value.length <= MAX_PATTERN_SUBJECT && matchesPattern(constraint.pattern, value);
  }
}

/** True when every constraint holds for `args`; an absent or empty list constrains nothing. */
export function satisfiesAll(constraints: readonly ArgumentConstraint[] | undefined, args: unknown): boolean {
  if (constraints === undefined) return true;
  for (const c of constraints) if (!satisfies(c, args)) return false;
  return true;
}

/** True when `child` alone admits only values `parent` admits (a sound, not complete, test). */
function implies(child: ArgumentConstraint, parent: ArgumentConstraint): boolean {
  if (child.path !== parent.path) return false;
  switch (parent.kind) {
    case 'range': {
      const inRange = (n: number): boolean => (parent.min === undefined || n >= parent.min) && (parent.max === undefined || n <= parent.max);
      if (child.kind === 'equals') return typeof child.value === 'number' && Number.isFinite(child.value) && inRange(child.value);
      if (child.kind !== 'range') return false;
      const lowOk = parent.min === undefined || (child.min !== undefined && child.min >= parent.min);
      const highOk = parent.max === undefined || (child.max !== undefined && child.max <= parent.max);
      return lowOk && highOk;
    }
    case 'equals':
      return child.kind === 'equals' && child.value === parent.value;
    case 'pattern':
      if (child.kind === 'equals') return typeof child.value === 'string' && matchesPattern(parent.pattern, child.value);
      // A pattern narrows another when it is the same, or has no wildcard and matches it.
      return child.kind === 'pattern' && (child.pattern === parent.pattern || (!/[*?]/.test(child.pattern) && matchesPattern(parent.pattern, child.pattern)));
  }
}

/**
 * True when a derived grant's constraints only narrow its parent's: every
 * parent constraint is implied by some child constraint on the same path
 * (the child may add constraints on other paths). Sound: whatever args
 * satisfy the child's constraints satisfy the parent's.
 */
export function narrows(parent: readonly ArgumentConstraint[] | undefined, child: readonly ArgumentConstraint[] | undefined): boolean {
  if (parent === undefined || parent.length === 0) return true;
  if (child === undefined) return false;
  return parent.every((p) => child.some((c) => implies(c, p)));
}
