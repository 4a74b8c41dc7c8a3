/**
 * A fast path for the line schemas (SPEC.md section 8, step 1): decides,
 * without zod's parse machinery, that zod would accept a value and hand back
 * the same value. A worker checks every bundle line against a schema, and
 * zod's general machinery (a result object per node, a copy of every object
 * and array) costs as much as the rest of the line's checks together.
 *
 * The decision is compiled once from the zod schema itself, which stays the
 * single source: each node's type test is zod's own (copied from zod 4's
 * `$ZodString`, `$ZodNumber`, `$ZodObject`...), and every refinement (regex,
 * length, integer range, `Timestamp`'s real-instant test) runs through zod's
 * own check function. Anything the compiler does not know (coercion,
 * transforms, defaults, loose or stripping objects, async checks) compiles to
 * "ask zod".
 *
 * `accepts(value)` returning true means: `schema.safeParse(value)` succeeds
 * and its data equals `value`, except that zod would rebuild objects with
 * their members in schema order. False means nothing: the caller asks zod,
 * which then gives the verdict and, on failure, the exact issue. So the fast
 * path can make checking cheaper, never different; the unit tests compare it
 * with zod on valid and mutated lines.
 *
 * Reads zod 4 internals (`schema._zod`), not a public API: an unexpected
 * shape makes the whole schema compile to "ask zod".
 */

/** Tri-state result of a compiled node: zod's data equals the input / zod refuses / not known here. */
const ACCEPT = 1;
const REFUSE = 0;
const UNSURE = -1;
type Verdict = typeof ACCEPT | typeof REFUSE | typeof UNSURE;
type Node = (value: unknown) => Verdict;

/** What this module reads of a zod 4 schema or check (zod/v4/core `$ZodType._zod`). */
interface ZodInternals {
  readonly def: ZodDef;
  readonly traits: ReadonlySet<string>;
  readonly check?: (payload: CheckPayload) => unknown;
  readonly values?: ReadonlySet<unknown>;
  readonly optin?: string;
  readonly optout?: string;
}

interface ZodSchemaLike {
  readonly _zod: ZodInternals;
}

interface ZodDef {
  readonly type: string;
  readonly check?: string;
  readonly coerce?: boolean;
  readonly checks?: readonly ZodSchemaLike[];
  readonly when?: (payload: CheckPayload) => boolean;
  readonly shape?: Readonly<Record<string, ZodSchemaLike>>;
  readonly catchall?: ZodSchemaLike;
  readonly element?: ZodSchemaLike;
  readonly innerType?: ZodSchemaLike;
  readonly options?: readonly ZodSchemaLike[];
  readonly discriminator?: string;
  readonly unionFallback?: boolean;
  readonly inclusive?: boolean;
  readonly keyType?: ZodSchemaLike;
  readonly valueType?: ZodSchemaLike;
  readonly mode?: string;
}

interface CheckPayload {
  value: unknown;
  issues: unknown[];
}

class Unsupported extends Error {}

/** Checks that only report (they never rewrite the value). */
const REPORTING_CHECKS: ReadonlySet<string> = new Set([
  'string_format',
  'min_length',
  'max_length',
  'length_equals',
  'number_format',
  'greater_than',
  'less_than',
  'custom',
]);

/** One payload for every check call: checks run synchronously, one at a time. */
const payload: CheckPayload = { value: undefined, issues: [] };

/** zod 4 `util.isObject`. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Number of keys `for...in` visits (what zod's unknown-member loop walks). */
function enumerableKeys(value: object): number {
  let count = 0;
  for (const _key in value) count += 1;
  return count;
}

/** zod 4 `util.isPlainObject` (what `z.record` accepts). */
function isPlainObject(value: unknown): boolean {
  if (!isObject(value)) return false;
  const ctor: unknown = value.constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prototype: unknown = (ctor as { prototype?: unknown }).prototype;
  return isObject(prototype) && Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf');
}

/**
 * The checks zod runs after a node's type test, in zod's order (a schema that
 * is itself a check, like `z.email()`, first): ACCEPT when none reports.
 */
function compileChecks(schema: ZodSchemaLike): ((value: unknown) => Verdict) | null {
  const zod = schema._zod;
  const checks: ZodSchemaLike[] = zod.traits.has('$ZodCheck') ? [schema, ...(zod.def.checks ?? [])] : [...(zod.def.checks ?? [])];
  if (checks.length === 0) return null;
  const whens: (((payload: CheckPayload) => boolean) | undefined)[] = [];
  const runs: ((payload: CheckPayload) => unknown)[] = [];
  for (const check of checks) {
    const def = check._zod.def;
    const run = check._zod.check;
    if (def.check === undefined || !REPORTING_CHECKS.has(def.check) || typeof run !== 'function') throw new Unsupported(`check ${String(def.check)}`);
    whens.push(def.when);
    runs.push(run);
  }
  return (value) => {
    payload.value = value;
    for (let i = 0; i < runs.length; i++) {
      const when = whens[i];
      if (when !== undefined && !when(payload)) continue;
      // An async refinement makes zod's synchronous parse throw: let zod do it.
      if ((runs[i] as (payload: CheckPayload) => unknown)(payload) instanceof Promise) return UNSURE;
      if (payload.issues.length > 0) {
        payload.issues.length = 0;
        return REFUSE;
      }
    }
    return ACCEPT;
  };
}

/** Combines the verdicts of the parts of one value: any refusal refuses it, else any doubt leaves it to zod. */
function both(a: Verdict, b: Verdict): Verdict {
  return a === REFUSE || b === REFUSE ? REFUSE : a === UNSURE || b === UNSURE ? UNSURE : ACCEPT;
}

/** A node: zod's type test (its `_zod.parse`), then its checks (its `runChecks`). */
function compileNode(schema: ZodSchemaLike): Node {
  const typeTest = compileType(schema);
  const checks = compileChecks(schema);
  if (checks === null) return typeTest;
  if (schema._zod.def.type === 'string' && schema._zod.def.coerce !== true) {
    // The common leaf (hashes, key ids, timestamps, principals), in one call.
    return (value) => (typeof value === 'string' ? checks(value) : REFUSE);
  }
  return (value) => {
    const verdict = typeTest(value);
    return verdict === REFUSE ? REFUSE : both(verdict, checks(value));
  };
}

function compileType(schema: ZodSchemaLike): Node {
  const zod = schema._zod;
  const def = zod.def;
  if (def.coerce === true) throw new Unsupported('coercion');
  switch (def.type) {
    case 'string':
      return (value) => (typeof value === 'string' ? ACCEPT : REFUSE);
    case 'number':
      return (value) => (typeof value === 'number' && !Number.isNaN(value) && Number.isFinite(value) ? ACCEPT : REFUSE);
    case 'boolean':
      return (value) => (typeof value === 'boolean' ? ACCEPT : REFUSE);
    case 'null':
      return (value) => (value === null ? ACCEPT : REFUSE);
    case 'literal':
    case 'enum': {
      const values = zod.values;
      if (values === undefined) throw new Unsupported(def.type);
      return (value) => (values.has(value) ? ACCEPT : REFUSE);
    }
    case 'unknown':
    case 'any':
      return () => ACCEPT;
    case 'never':
      return () => REFUSE;
    case 'optional': {
      const inner = def.innerType;
      if (inner === undefined || inner._zod.optin === 'defaulted') throw new Unsupported('optional');
      const innerNode = compileNode(inner);
      // An absent member is decided by the object; a present `undefined` cannot come out of JSON.
      return (value) => (value === undefined ? UNSURE : innerNode(value));
    }
    case 'nullable': {
      if (def.innerType === undefined) throw new Unsupported('nullable');
      const innerNode = compileNode(def.innerType);
      return (value) => (value === null ? ACCEPT : innerNode(value));
    }
    case 'array': {
      if (def.element === undefined) throw new Unsupported('array');
      const element = compileNode(def.element);
      return (value) => {
        if (!Array.isArray(value)) return REFUSE;
        let verdict: Verdict = ACCEPT;
        for (let i = 0; i < value.length; i++) {
          verdict = both(verdict, element(value[i]));
          if (verdict === REFUSE) return REFUSE;
        }
        return verdict;
      };
    }
    case 'object':
      return compileObject(def);
    case 'record':
      return compileRecord(def);
    case 'union':
      return def.discriminator === undefined ? compileUnion(def) : compileDiscriminatedUnion(def);
    default:
      throw new Unsupported(def.type);
  }
}

/**
 * zod 4 `$ZodObject`: a strict object (catchall `never`) refuses unknown
 * members; a stripping one would drop them, so its data would differ.
 */
function compileObject(def: ZodDef): Node {
  const shape = def.shape;
  if (shape === undefined || Object.getOwnPropertySymbols(shape).length > 0) throw new Unsupported('object shape');
  const catchall = def.catchall;
  if (catchall !== undefined && catchall._zod.def.type !== 'never') throw new Unsupported('object catchall');
  const onUnknown: Verdict = catchall === undefined ? UNSURE : REFUSE;
  const keys = Object.keys(shape);
  const nodes: Node[] = [];
  const mayBeAbsent: boolean[] = [];
  for (const key of keys) {
    // Members an object could inherit would make the member count below meaningless.
    if (key === '__proto__' || key in Object.prototype) throw new Unsupported(`member ${key}`);
    const member = shape[key] as ZodSchemaLike;
    const { optin, optout } = member._zod;
    if (optin !== undefined && optin !== 'optional') throw new Unsupported(`member ${key} ${optin}`);
    nodes.push(compileNode(member));
    mayBeAbsent.push(optin === 'optional' && optout === 'optional');
  }
  const known: ReadonlySet<string> = new Set(keys);
  return (value) => {
    if (!isObject(value)) return REFUSE;
    let verdict: Verdict = ACCEPT;
    let present = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const member = value[key];
      // zod asks `key in input`; only an absent member reads as undefined (JSON has no undefined).
      if (member === undefined && !(key in value)) {
        if (mayBeAbsent[i] === true) continue;
        return REFUSE;
      }
      present += 1;
      const memberVerdict = (nodes[i] as Node)(member);
      if (memberVerdict === REFUSE) return REFUSE;
      if (memberVerdict === UNSURE) verdict = UNSURE;
    }
    // Every present member is an own one (none is on Object.prototype), so
    // more enumerable keys than that means members outside the shape.
    if (enumerableKeys(value) !== present) {
      for (const key in value) {
        if (!known.has(key)) return onUnknown === REFUSE ? REFUSE : UNSURE;
      }
    }
    return verdict;
  };
}

/**
 * zod 4 `$ZodRecord` of string keys and unknown values: any plain object.
 * zod drops an own `__proto__` member from its data, so that is left to zod.
 */
function compileRecord(def: ZodDef): Node {
  const keyType = def.keyType?._zod;
  const valueType = def.valueType?._zod;
  if (keyType === undefined || valueType === undefined || def.mode === 'loose') throw new Unsupported('record');
  if (keyType.def.type !== 'string' || keyType.def.coerce === true || (keyType.def.checks?.length ?? 0) > 0 || keyType.traits.has('$ZodCheck')) {
    throw new Unsupported('record key');
  }
  if (valueType.def.type !== 'unknown' && valueType.def.type !== 'any') throw new Unsupported('record value');
  return (value) => {
    if (!isPlainObject(value)) return REFUSE;
    return Object.prototype.hasOwnProperty.call(value, '__proto__') ? UNSURE : ACCEPT;
  };
}

/** zod 4 `$ZodUnion`: the first option that accepts gives the data, so a doubt before it leaves the value to zod. */
function compileUnion(def: ZodDef): Node {
  if (def.options === undefined || def.options.length === 0 || def.inclusive === false) throw new Unsupported('union');
  const options = def.options.map(compileNode);
  return (value) => {
    for (const option of options) {
      const verdict = option(value);
      if (verdict !== REFUSE) return verdict;
    }
    return REFUSE;
  };
}

/** zod 4 `$ZodDiscriminatedUnion`: the option the discriminator's literal names decides, or none accepts. */
function compileDiscriminatedUnion(def: ZodDef): Node {
  const discriminator = def.discriminator as string;
  if (def.options === undefined || def.unionFallback === true) throw new Unsupported('discriminated union');
  const byValue = new Map<unknown, Node>();
  for (const option of def.options) {
    const values = option._zod.def.shape?.[discriminator]?._zod.values;
    if (option._zod.def.type !== 'object' || values === undefined) throw new Unsupported('discriminated union option');
    const node = compileNode(option);
    for (const value of values) {
      if (value === undefined || byValue.has(value)) throw new Unsupported('discriminator value');
      byValue.set(value, node);
    }
  }
  return (value) => {
    if (!isObject(value)) return REFUSE;
    const option = byValue.get(value[discriminator]);
    return option === undefined ? REFUSE : option(value);
  };
}

/**
 * Compiles `schema` (a zod 4 schema) into `accepts(value)`: true only when
 * zod would accept `value` and give back equal data (see the module comment).
 * A schema using anything not known here compiles to a function that is
 * always false, so zod decides every value.
 */
export function compileFastPath(schema: unknown): (value: unknown) => boolean {
  let node: Node;
  try {
    node = compileNode(schema as ZodSchemaLike);
  } catch (err) {
    if (err instanceof Unsupported || err instanceof TypeError) return () => false;
    throw err;
  }
  return (value) => node(value) === ACCEPT;
}
